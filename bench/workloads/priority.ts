import { messages } from '../adapter';
import { drain, prefill } from '../measure';
import type { OursSystem } from '../systems/ours';
import type { Figure, WorkloadContext } from './context';
import { withSystem } from './context';

/**
 * Consume rate of a topic whose messages have mixed priorities (levels 0-9 round robin)
 * against a plain topic's, same run, concurrency 50. Only this project has priorities; the
 * other systems report nothing here.
 */
export async function priority(ctx: WorkloadContext): Promise<Figure[]> {
  const total = ctx.quick ? 2_000 : 50_000;
  const capMs = ctx.quick ? 20_000 : 120_000;
  const plain = await withSystem(ctx, 'priority-plain', async (system) => {
    if (!('service' in system)) return undefined;
    await prefill(system, total, 1_000, capMs);
    return (await drain(system, total, 50, capMs)).rate;
  });
  const mixed = await withSystem(ctx, 'priority-mixed', async (system) => {
    if (!('service' in system)) return undefined;
    const { service, topic } = system as OursSystem;
    for (let from = 0; from < total; from += 1_000) {
      const batch = messages(from, Math.min(1_000, total - from));
      await service.pushMany(
        topic,
        batch.map((payload) => ({ payload, priority: payload.seq % 10 })),
      );
    }
    return (await drain(system, total, 50, capMs)).rate;
  });
  return [
    { id: 'prio-plain', label: 'priorities: plain consume+ack/s (concurrency 50)', better: 'higher', value: plain },
    {
      id: 'prio-mixed',
      label: 'priorities: consume+ack/s, levels 0-9 mixed',
      better: 'higher',
      value: mixed,
    },
    {
      id: 'prio-ratio',
      label: 'priorities: mixed / plain consume rate (%)',
      better: 'higher',
      value: plain && mixed ? (100 * mixed) / plain : undefined,
      digits: 0,
    },
  ];
}
