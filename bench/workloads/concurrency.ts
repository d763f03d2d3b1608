import { drain, prefill } from '../measure';
import type { Figure, WorkloadContext } from './context';
import { short, withSystem } from './context';
import { capNote } from './throughput';

export const CONCURRENCIES = [1, 10, 50, 200];

/** Consume rate of a prefilled queue at growing concurrency (also drawn as the chart). */
export async function concurrency(ctx: WorkloadContext): Promise<Figure[]> {
  const total = ctx.quick ? 2_000 : 20_000;
  const capMs = ctx.quick ? 20_000 : 120_000;
  const figures: Figure[] = [];
  for (const handlers of CONCURRENCIES) {
    const figure = await withSystem(ctx, `concurrency-${handlers}`, async (system): Promise<Figure> => {
      await prefill(system, total, 1_000, capMs);
      const rate = await drain(system, total, handlers, capMs);
      return {
        id: `conc-${handlers}`,
        label: `consume/s at concurrency ${handlers} (${short(total)} msgs)`,
        better: 'higher',
        value: rate.rate,
        note: capNote(rate.capped, capMs),
      };
    });
    figures.push(figure);
  }
  return figures;
}
