import type { QueueSystem, SystemFactory } from '../adapter';
import type { BenchRedis } from '../redis-server';

/** One measured figure of one system. `value` undefined: not measured. */
export interface Figure {
  id: string;
  label: string;
  better: 'higher' | 'lower';
  value: number | undefined;
  /** Shown after the number, e.g. "(capped at 120 s)". */
  note?: string;
  /** Decimals to print; default by size. */
  digits?: number;
}

export interface WorkloadContext {
  redis: BenchRedis;
  factory: SystemFactory;
  quick: boolean;
  /** Markdown notes a workload adds to latest.md (per system). */
  details: string[];
}

export type Workload = (ctx: WorkloadContext) => Promise<Figure[]>;

let queueCounter = 0;

/** FLUSHALL, open the system on a fresh queue name, run `body`, close it whatever happens. */
export async function withSystem<T>(
  ctx: WorkloadContext,
  label: string,
  body: (system: QueueSystem) => Promise<T>,
): Promise<T> {
  await ctx.redis.admin.flushall();
  const system = await ctx.factory(ctx.redis.url, `bench-${label}-${++queueCounter}`);
  try {
    return await body(system);
  } finally {
    await system.close();
  }
}

/** 1000 -> "1k", 1000000 -> "1M". */
export function short(n: number): string {
  return n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n);
}
