import { messages, now, type QueueSystem, sleep } from './adapter';

export interface Rate {
  /** Messages per second. */
  rate: number;
  /** Messages handled in the measured window. */
  count: number;
  /** The time cap ended the window before `count` reached the target. */
  capped: boolean;
}

/** Pushes `total` messages in batches of `chunk`, in order; stops early at `capMs`. */
export async function prefill(system: QueueSystem, total: number, chunk: number, capMs: number): Promise<Rate> {
  const start = now();
  let pushed = 0;
  while (pushed < total && now() - start < capMs) {
    const size = Math.min(chunk, total - pushed);
    await system.pushBatch(messages(pushed, size));
    pushed += size;
  }
  return { rate: pushed / ((now() - start) / 1000), count: pushed, capped: pushed < total };
}

/**
 * Starts a consumer on a prefilled queue and measures how fast the first `target` messages
 * are handled: from the first handler start to the last one, so every system's startup
 * cost is left out. Stops the consumer when `target` is reached or `capMs` has passed.
 */
export async function drain(system: QueueSystem, target: number, concurrency: number, capMs: number): Promise<Rate> {
  let seen = 0;
  let first = 0;
  let last = 0;
  let reached!: () => void;
  const done = new Promise<void>((resolve) => (reached = resolve));
  const consumer = await system.startConsumer(concurrency, () => {
    if (seen >= target) return;
    last = now();
    if (seen++ === 0) first = last;
    if (seen === target) reached();
  });
  await Promise.race([done, sleep(capMs)]);
  const count = seen;
  const elapsed = last - first;
  await consumer.stop();
  return { rate: count > 1 && elapsed > 0 ? ((count - 1) * 1000) / elapsed : 0, count, capped: count < target };
}

/** Nearest-rank percentile of an unsorted list (0 for an empty one). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
