import { LIMITS } from '../../common/redis-ack-queue.constants';
import type { ReplicatedPushes } from './replicated-pushes';
import type { ScriptRunner } from '../scripts/script-runner';
import type { StoredFormat } from './stored-format';
import { idInPartition, partitionOf } from '../keys/partitions';
import { byPartition, type TopicLayout, type TopicLayouts } from '../scripts/topic-layouts';
import {
  decodeKeyedReplies,
  type EncodedPush,
  type KeyedReply,
  keyedPushArguments,
  pushArguments,
} from '../codecs/wire-format';

/**
 * Stores new messages: routes each to its partition by id, sends push.lua in chunks (through
 * replicated pushes when they are on), and wakes the consumers of a partitioned topic. Pushes
 * with a key mode go to push-keyed.lua, in their key's partition.
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
   * Stores (or applies to their keys' messages) pushes with a key mode, in order; one reply per
   * item. Each goes to its key's partition, its new id routed there too (`#<k>` appended when
   * needed), so everything that finds a message by id still does.
   */
  async pushKeyed(topic: string, items: EncodedPush[]): Promise<KeyedReply[]> {
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'push');
    const count = layout.partitions.length;
    for (const item of items) item.id = idInPartition(item.id, partitionOf(item.keyed!.key, count), count);
    const replies = new Array<KeyedReply>(items.length);
    let woke = false;
    await Promise.all(
      [...byPartition(layout, items)].map(async ([partition, positions]) => {
        const keys = layout.partitions[partition];
        const own = positions.map((i) => items[i]);
        const ids = own.map(({ id }) => id);
        const chunks: (string | number)[][] = [];
        for (let i = 0; i < own.length; i += LIMITS.pushChunk)
          chunks.push(keyedPushArguments(own.slice(i, i + LIMITS.pushChunk)));
        // One chunk after another: a key's later pushes must see its earlier ones.
        const answers: (string | number)[][] = [];
        for (const chunk of chunks) {
          const [answer] = this.replicated
            ? await this.replicated.push<(string | number)[]>(layout.name, keys, [chunk], ids, 'pushKeyed')
            : [await this.scripts.run<(string | number)[]>('pushKeyed', layout.name, keys, chunk)];
          answers.push(answer);
        }
        const decoded = answers.flatMap(decodeKeyedReplies);
        positions.forEach((position, k) => (replies[position] = decoded[k]));
        woke ||= answers.some((answer) => answer.at(-1) === 1);
      }),
    );
    if (woke) await this.scripts.wakeHome(layout);
    return replies;
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
      ? await this.replicated.push<number[]>(
          layout.name,
          keys,
          chunks,
          items.map(({ id }) => id),
        )
      : await Promise.all(chunks.map((chunk) => this.scripts.run<number[]>('push', layout.name, keys, chunk)));
    return [...replies.flatMap((reply) => reply.slice(0, -1)), Math.max(...replies.map((reply) => reply.at(-1)!))];
  }
}
