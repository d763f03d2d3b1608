import { userKeyed } from '../../common/user-keyed';
import type { GroupWeights } from '../../interfaces';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/**
 * The weights of a topic's ordered groups, kept in each partition's `groupWeights` HASH: every
 * partition takes turns among its own groups (prelude-groups.lua, next_turn), so each gets them all.
 */
export class GroupWeightsStore {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Replaces the weights of every partition (null or {}: none, round robin again). */
  async set(topic: string, weights: GroupWeights | null): Promise<void> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'set group weights');
    const pairs = Object.entries(weights ?? {}).flat();
    await Promise.all(layout.partitions.map((keys) => this.scripts.run('groupWeightsSet', topic, keys, pairs)));
  }

  /** The weights set for a topic ({} when none), by group in an object without a prototype. */
  async get(topic: string): Promise<GroupWeights> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'read group weights');
    const pairs = await this.scripts.run<string[]>('groupWeightsGet', topic, layout.partitions[0], []);
    const weights = userKeyed<number>();
    for (let i = 0; i < pairs.length; i += 2) weights[pairs[i]] = Number(pairs[i + 1]);
    return weights;
  }
}
