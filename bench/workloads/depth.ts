import { drain, prefill } from '../measure';
import type { Figure, WorkloadContext } from './context';
import { short, withSystem } from './context';
import { capNote } from './throughput';

/** Consume rate over the first messages of queues of growing depth (concurrency 50). */
export async function depth(ctx: WorkloadContext): Promise<Figure[]> {
  const depths = ctx.quick ? [1_000, 10_000] : [1_000, 100_000, 1_000_000];
  const window = ctx.quick ? 2_000 : 50_000;
  const prefillCapMs = ctx.quick ? 20_000 : 240_000;
  const drainCapMs = ctx.quick ? 20_000 : 120_000;
  const figures: Figure[] = [];
  for (const total of depths) {
    const measured = Math.min(total, window);
    const figure = await withSystem(ctx, `depth-${total}`, async (system): Promise<Figure> => {
      const fill = await prefill(system, total, 5_000, prefillCapMs);
      const rate = await drain(system, measured, 50, drainCapMs);
      const notes = [
        fill.capped && `prefill capped at ${prefillCapMs / 1000} s: depth ${fill.count.toLocaleString('en-US')}`,
        capNote(rate.capped, drainCapMs),
      ].filter(Boolean);
      return {
        id: `depth-${total}`,
        label: `consume/s at depth ${short(total)} (first ${short(measured)}, conc. 50)`,
        better: 'higher',
        value: rate.rate,
        note: notes.join('; ') || undefined,
      };
    });
    figures.push(figure);
  }
  return figures;
}
