import { sendCommand } from '../redis/redis-command';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/**
 * The outbox relay's receipts in a topic's partitions (K.relayReceipts): push.lua and
 * push-keyed.lua record and check them atomically with each push; this reads one (a check
 * before a flow's nodes are stored) and forgets them after the relay's database commit.
 */
export class RelayReceipts {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Whether the partition holds `receipt` (read-only: the atomic check is the push's own). */
  async held(topic: string, partition: number, receipt: string): Promise<boolean> {
    const key = this.layouts.get(topic).partitions[partition].relayReceipts;
    const score = await sendCommand(this.scripts.client, 'push', topic, () => this.scripts.client.zscore(key, receipt));
    return score !== null;
  }

  /** Forgets receipts of one partition (receipts-forget.lua); forgetting one not held is no error. */
  async forget(topic: string, partition: number, receipts: string[]): Promise<void> {
    if (receipts.length === 0) return;
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'forget relay receipts');
    await this.scripts.run('receiptsForget', topic, layout.partitions[partition], receipts);
  }
}
