import { sleep } from '../adapter';
import { prefill } from '../measure';
import type { Figure, WorkloadContext } from './context';
import { withSystem } from './context';

/** Redis used_memory growth per queued (not consumed) message. */
export async function memory(ctx: WorkloadContext): Promise<Figure[]> {
  const total = ctx.quick ? 10_000 : 100_000;
  return withSystem(ctx, 'memory', async (system) => {
    await sleep(200);
    const before = await ctx.redis.info('memory', 'used_memory');
    await prefill(system, total, 1_000, 300_000);
    await sleep(200);
    const after = await ctx.redis.info('memory', 'used_memory');
    const n = total.toLocaleString('en-US');
    return [
      {
        id: 'mem',
        label: `memory: Redis bytes per queued msg (${n} queued)`,
        better: 'lower',
        value: (after - before) / total,
        digits: 0,
      },
    ];
  });
}
