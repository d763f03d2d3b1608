import { InvalidOptionError } from '../../errors';
import type { TopicLimits } from '../../interfaces';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayout, TopicLayouts } from '../scripts/topic-layouts';

/**
 * Who writes limits: an operator or app code by hand (setLimits), a consumer with limits declared
 * in code, or a consumer that declares none (it withdraws those declared before, not hand-set ones).
 */
export type LimitsWriter = 'hand' | 'code' | 'withdraw';

/**
 * The fleet-wide limits of topics, kept in each partition's `limits` HASH (prelude-limits.lua reads
 * it in every reserve). A partition enforces its share of globalConcurrency and rateLimit (a
 * Cluster runs no script across slots); the totals are kept too (tc, trm), so `get` answers what
 * was set.
 */
export class TopicLimitsStore {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /**
   * Replaces the limits of every partition (null: none) and wakes the consumers. `by` 'withdraw'
   * removes them unless they were set by hand.
   */
  async set(topic: string, limits: TopicLimits | null, by: LimitsWriter): Promise<void> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'set limits');
    const fields = layout.partitions.map((_, i) => [by, ...limitFields(layout, limits, i)]);
    await Promise.all(layout.partitions.map((keys, i) => this.scripts.run('limitsSet', topic, keys, fields[i])));
    await this.scripts.wakeHome(layout);
  }

  /** The limits set for a topic ({} when none). */
  async get(topic: string): Promise<TopicLimits> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'read limits');
    const pairs = await this.scripts.run<string[]>('limitsGet', topic, layout.partitions[0], []);
    const stored = new Map<string, number>();
    for (let i = 0; i < pairs.length; i += 2) stored.set(pairs[i], Number(pairs[i + 1]));
    const limits: TopicLimits = {};
    if (stored.has('tc')) limits.globalConcurrency = stored.get('tc');
    if (stored.has('trm')) limits.rateLimit = { max: stored.get('trm')!, perMs: stored.get('rw')! };
    if (stored.has('gm')) limits.groupRateLimit = { max: stored.get('gm')!, perMs: stored.get('gw')! };
    if (stored.has('gc')) limits.groupConcurrency = stored.get('gc');
    return limits;
  }
}

/** Throws when a topic has fewer global slots or starts per window than partitions (each needs one). */
export function assertShareable(limits: TopicLimits, partitions: number): void {
  if (limits.globalConcurrency !== undefined) share(limits.globalConcurrency, partitions, 0, 'globalConcurrency');
  if (limits.rateLimit) share(limits.rateLimit.max, partitions, 0, 'rateLimit.max');
}

/** limits-set.lua's field, value pairs for partition `index`. */
function limitFields(layout: TopicLayout, limits: TopicLimits | null, index: number): (string | number)[] {
  if (!limits) return [];
  const count = layout.partitions.length;
  const fields: (string | number)[] = [];
  const { globalConcurrency, rateLimit, groupRateLimit, groupConcurrency } = limits;
  if (globalConcurrency !== undefined) {
    fields.push('c', share(globalConcurrency, count, index, 'globalConcurrency'), 'tc', globalConcurrency);
  }
  if (rateLimit) {
    fields.push('rm', share(rateLimit.max, count, index, 'rateLimit.max'), 'trm', rateLimit.max);
    fields.push('rw', rateLimit.perMs);
  }
  if (groupRateLimit) fields.push('gm', groupRateLimit.max, 'gw', groupRateLimit.perMs);
  if (groupConcurrency !== undefined) fields.push('gc', groupConcurrency);
  return fields;
}

/** Partition `index`'s even share of `total` (the first ones take the remainder). */
function share(total: number, count: number, index: number, option: string): number {
  if (total < count) {
    throw new InvalidOptionError(option, total, `at least the topic's partition count (${count})`);
  }
  return Math.floor(total / count) + (index < total % count ? 1 : 0);
}
