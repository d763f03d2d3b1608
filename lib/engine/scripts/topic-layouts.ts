import { PartitionCountMismatchError } from '../../errors';
import { sendCommand } from '../redis/redis-command';
import { partitionOf, partitionTags } from '../keys/partitions';
import { partitionCountKey, queueKeys, tagKeys, type QueueKeys } from '../keys/queue-keys';
import type { RedisClient } from '../redis/connection';

/** Where a topic lives: one key set per partition, plus its home slot. */
export interface TopicLayout {
  name: string;
  /** Keys of each partition; a single entry for an unpartitioned topic. */
  partitions: QueueKeys[];
  /** The plain-tag keys: consumers of a partitioned topic wait on its wake list. */
  home: QueueKeys;
  /** The partition count in Redis agrees with this process' (checked once). */
  verified: boolean;
  /** Where the next `reserve` starts, so partitions take turns. */
  cursor: number;
  /** When a full reserve last woke other consumers to help. */
  helpWokenAt: number;
}

/** The layouts of the topics a service has used, made once per topic. */
export class TopicLayouts {
  private readonly layouts = new Map<string, TopicLayout>();

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    /** Partition count of every topic that has more than one. */
    private readonly partitionCounts: ReadonlyMap<string, number>,
  ) {}

  get(topic: string): TopicLayout {
    let layout = this.layouts.get(topic);
    if (!layout) {
      const tags = partitionTags(this.prefix, topic, this.partitionCounts.get(topic) ?? 1);
      const home = queueKeys(this.prefix, topic);
      layout = { name: topic, partitions: tags.map(tagKeys), home, verified: false, cursor: -1, helpWokenAt: 0 };
      this.layouts.set(topic, layout);
    }
    return layout;
  }

  /** Checks (and records) each topic's partition count again on its next use: Redis lost them. */
  forgetChecks(): void {
    for (const layout of this.layouts.values()) layout.verified = false;
  }

  /**
   * Once per topic and process: a partitioned topic records its count in its home slot (the
   * first writer wins); any process whose count differs fails instead of pushing to or
   * reading from partitions the others never see.
   */
  async verify(layout: TopicLayout, operation: string): Promise<void> {
    if (layout.verified) return;
    const key = partitionCountKey(this.prefix, layout.name);
    const count = layout.partitions.length;
    // SET NX GET sent twice answers the count the first one wrote: safe to resend.
    const stored = await sendCommand(this.client, operation, layout.name, () =>
      count === 1 ? this.client.get(key) : this.client.set(key, count, 'NX', 'GET'),
    );
    if (stored !== null && Number(stored) !== count) {
      throw new PartitionCountMismatchError(layout.name, count, Number(stored));
    }
    layout.verified = true;
  }
}

/** The partition of a message (or lease): its group's when it has one, else its id's. */
export function partitionOfMessage(layout: TopicLayout, { id, group }: { id: string; group?: string }): number {
  return partitionOf(group ?? id, layout.partitions.length);
}

/** Positions of `items` grouped by partition (by their groups, else their ids). */
export function byPartition(layout: TopicLayout, items: { id: string; group?: string }[]): Map<number, number[]> {
  const count = layout.partitions.length;
  if (count === 1) return new Map([[0, items.map((_, i) => i)]]);
  const groups = new Map<number, number[]>();
  items.forEach((item, i) => {
    const partition = partitionOfMessage(layout, item);
    const positions = groups.get(partition);
    if (positions) positions.push(i);
    else groups.set(partition, [i]);
  });
  return groups;
}
