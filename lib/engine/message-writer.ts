import { LIMITS } from '../common/redis-ack-queue.constants';
import type { ReplicatedPushes } from './replicated-pushes';
import type { ScriptRunner } from './script-runner';
import type { StoredFormat } from './stored-format';
import { byPartition, type TopicLayout, type TopicLayouts } from './topic-layouts';
import { type EncodedPush, pushArguments } from './wire-format';

/**
 * Stores new messages: routes each to its partition by id, sends push.lua in chunks (through
 * replicated pushes when they are on), and wakes the consumers of a partitioned topic.
 */
export class MessageWriter {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly replicated: ReplicatedPushes | undefined,
    private readonly format: StoredFormat,
  ) {}

  /** Stores messages (in one round trip per partition); one flag per item: true stored, false duplicate. */
  async push(topic: string, items: EncodedPush[]): Promise<boolean[]> {
    return (await this.pushCodes(topic, items)).map((code) => code === 1);
  }

  /** As push, with push.lua's code per item: 1 stored, 0 duplicate, 3 a flow node's id taken outside its flow. */
  async pushCodes(topic: string, items: EncodedPush[]): Promise<number[]> {
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'push');
    const stored = new Array<number>(items.length);
    let woke = false;
    // A group lives in one partition: its messages are routed by the group, not their ids.
    const groups = byPartition(layout, items);
    await Promise.all(
      [...groups].map(async ([partition, positions]) => {
        const flags = await this.pushToPartition(
          layout,
          partition,
          positions.map((i) => items[i]),
        );
        positions.forEach((position, k) => (stored[position] = flags[k]));
        woke ||= flags[positions.length] === 1;
      }),
    );
    if (woke) await this.scripts.wakeHome(layout);
    return stored;
  }

  /**
   * One push.lua call per 500 items, sent at once (with replicatedPushes, confirmed by
   * replicas first). Returns push.lua's flag per item, then 1 if consumers were woken.
   */
  private async pushToPartition(layout: TopicLayout, partition: number, items: EncodedPush[]): Promise<number[]> {
    const keys = layout.partitions[partition];
    const chunks: (string | number)[][] = [];
    for (let i = 0; i < items.length; i += LIMITS.pushChunk)
      chunks.push(pushArguments(items.slice(i, i + LIMITS.pushChunk), this.format.compact));
    const replies = this.replicated
      ? await this.replicated.push(
          layout.name,
          keys,
          chunks,
          items.map(({ id }) => id),
        )
      : await Promise.all(chunks.map((chunk) => this.scripts.run<number[]>('push', layout.name, keys, chunk)));
    return [...replies.flatMap((reply) => reply.slice(0, -1)), Math.max(...replies.map((reply) => reply.at(-1)!))];
  }
}
