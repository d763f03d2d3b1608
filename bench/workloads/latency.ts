import { message, now, sleep } from '../adapter';
import { percentile } from '../measure';
import type { Figure, WorkloadContext } from './context';
import { withSystem } from './context';

const RATE = 500;

/** 500 single pushes per second into an idle consumer; push-to-handler-start latency. */
export async function latency(ctx: WorkloadContext): Promise<Figure[]> {
  const seconds = ctx.quick ? 1 : 5;
  const total = RATE * seconds;
  return withSystem(ctx, 'latency', async (system) => {
    const samples: number[] = [];
    let all!: () => void;
    const received = new Promise<void>((resolve) => (all = resolve));
    const consumer = await system.startConsumer(10, (m) => {
      samples.push(now() - m.t);
      if (samples.length === total) all();
    });
    await sleep(1_000); // let the consumer settle into its idle wait
    const pushes: Promise<void>[] = [];
    const start = now();
    let sent = 0;
    while (sent < total && now() - start < seconds * 1_000 + 5_000) {
      const due = Math.min(total, Math.floor(((now() - start) * RATE) / 1_000) + 1);
      for (; sent < due; sent++) pushes.push(system.push(message(sent, now())));
      await sleep(1);
    }
    await Promise.all(pushes);
    await Promise.race([received, sleep(10_000)]);
    await consumer.stop();
    const lost = total - samples.length;
    const note = lost > 0 ? `${lost} not received in 10 s` : undefined;
    return [
      {
        id: 'lat-p50',
        label: `latency @${RATE}/s: p50 ms`,
        better: 'lower',
        value: percentile(samples, 50),
        digits: 2,
        note,
      },
      {
        id: 'lat-p99',
        label: `latency @${RATE}/s: p99 ms`,
        better: 'lower',
        value: percentile(samples, 99),
        digits: 2,
      },
      {
        id: 'lat-max',
        label: `latency @${RATE}/s: max ms`,
        better: 'lower',
        value: percentile(samples, 100),
        digits: 2,
      },
    ];
  });
}
