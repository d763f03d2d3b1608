import { message, sleep } from '../adapter';
import { percentile } from '../measure';
import type { Figure, WorkloadContext } from './context';
import { withSystem } from './context';

/**
 * Messages due 1-3 s later (random, whole ms) pushed in one batch into an idle consumer.
 * Each system gets the same absolute due times (Date.now() read just before the push, plus
 * the delay); lateness = handler start (Date.now()) minus that due time, so a negative
 * lateness is a message that really ran early, and the push's own duration is left out.
 */
export async function delayed(ctx: WorkloadContext): Promise<Figure[]> {
  const total = ctx.quick ? 200 : 2_000;
  const [minMs, maxMs] = ctx.quick ? [500, 1_500] : [1_000, 3_000];
  return withSystem(ctx, 'delayed', async (system) => {
    const lateness: number[] = [];
    const due: number[] = [];
    let all!: () => void;
    const received = new Promise<void>((resolve) => (all = resolve));
    const consumer = await system.startConsumer(50, (m) => {
      lateness.push(Date.now() - due[m.seq]);
      if (lateness.length === total) all();
    });
    await sleep(500);
    const delays = Array.from({ length: total }, () => minMs + Math.floor(Math.random() * (maxMs - minMs + 1)));
    const batch = delays.map((_, i) => message(i));
    const t0 = Date.now();
    delays.forEach((d, i) => (due[i] = t0 + d));
    await system.pushBatch(batch, due);
    await Promise.race([received, sleep(maxMs + 15_000)]);
    await consumer.stop();
    const early = lateness.filter((ms) => ms < 0).length;
    const missing = total - lateness.length;
    const range = `${minMs / 1000}-${maxMs / 1000} s`;
    return [
      {
        id: 'del-p50',
        label: `delayed (${total}, due in ${range}): lateness p50 ms`,
        better: 'lower',
        value: percentile(lateness, 50),
        digits: 0,
      },
      { id: 'del-p99', label: 'delayed: lateness p99 ms', better: 'lower', value: percentile(lateness, 99), digits: 0 },
      {
        id: 'del-early',
        label: 'delayed: ran early (count)',
        better: 'lower',
        value: early,
        digits: 0,
        note: missing > 0 ? `${missing} never ran` : undefined,
      },
    ];
  });
}
