import type { ScalingReport } from '../../interfaces';
import { HISTORY_SLOTS } from '../codecs/history-format';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/** A target with its defaults filled in, as scaling-set.lua keeps it. */
export interface StoredScalingTarget {
  targetWaitMs: number;
  minConsumers: number;
  maxConsumers: number;
  concurrency: number;
  cooldownMs: number;
}

/**
 * What a partitioned topic's read passes in, summed over its partitions (its home slot holds
 * neither): the backlog as metrics counts it ready, and the `pushed` counters.
 */
export interface ScalingTotals {
  backlog: number;
  pushed: number;
}

type ScalingReply = [number, number, string, string, number, number, number, number, number, number, number];

/**
 * A topic's scaling target and signal (docs/scaling.md): one HASH in its home slot, written by
 * setScalingTarget and by each read (the smoothing state and arrival samples), one script call.
 */
export class ScalingStore {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Sets the target, or with null removes it and the signal's state. */
  async set(topic: string, target: StoredScalingTarget | null): Promise<void> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'set the scaling target');
    const args = target
      ? [target.targetWaitMs, target.minConsumers, target.maxConsumers, target.concurrency, target.cooldownMs]
      : [];
    await this.scripts.run('scalingSet', topic, layout.home, args);
  }

  /** Whether the topic's counts live in partitions of their own (then `read` needs their totals). */
  isPartitioned(topic: string): boolean {
    return this.layouts.get(topic).partitions.length > 1;
  }

  /**
   * The signal now (null without a target): `totals` summed over the partitions, required of a
   * partitioned topic; an unpartitioned one's are read in the same call when not given.
   */
  async read(topic: string, totals?: ScalingTotals): Promise<ScalingReport | null> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'read the scaling signal');
    const args = [HISTORY_SLOTS, totals ? totals.backlog : '', totals ? totals.pushed : ''];
    const reply = await this.scripts.run<ScalingReply | null>('scalingRead', topic, layout.home, args);
    if (!reply) return null;
    const [desired, computed, arrival, handling, backlog, targetWaitMs, min, max, concurrency, cooldownMs, at] = reply;
    return {
      topic,
      desiredConsumers: Number(desired),
      computedConsumers: Number(computed),
      arrivalPerSecond: Number(arrival),
      handlingMs: handling === '' ? 0 : Number(handling),
      backlog: Number(backlog),
      targetWaitMs: Number(targetWaitMs),
      minConsumers: Number(min),
      maxConsumers: Number(max),
      concurrency: Number(concurrency),
      cooldownMs: Number(cooldownMs),
      at: Number(at),
    };
  }
}
