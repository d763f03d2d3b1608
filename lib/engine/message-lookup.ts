import type { MessageInfo, MessageState } from '../interfaces';
import { decodeGetReply, decodeListReply } from './lookup-format';
import { partitionOf } from './partitions';
import type { QueueKeys } from './queue-keys';
import type { ScriptRunner } from './script-runner';
import type { TopicLayout, TopicLayouts } from './topic-layouts';

/** Sort keys of merged pages: the order each state is served in. */
const ORDER: Record<Exclude<MessageState, 'dead'>, (m: MessageInfo) => number> = {
  // Partitions take turns: across them, push time is the best guess at the order.
  ready: (m) => m.enqueuedAt ?? 0,
  delayed: (m) => m.dueAt ?? 0,
  leased: (m) => m.leaseDeadline ?? 0,
  completed: (m) => -(m.completedAt ?? 0),
};

/**
 * The engine's look-up and cancel: one message by id (in the partition its id belongs to),
 * pages by state merged over the partitions, and cancel, which also tells the consumers of
 * a leased message (cancel.lua publishes its id).
 */
export class MessageLookup {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly defaultMaxAttempts: number,
  ) {}

  async get<T>(topic: string, id: string): Promise<MessageInfo<T> | null> {
    const reply = await this.inAnyPartition(topic, id, (keys) =>
      this.scripts.run<(string | null)[] | null>('get', topic, keys, [id]),
    );
    return decodeGetReply<T>(id, reply, this.defaultMaxAttempts);
  }

  async list<T>(
    topic: string,
    state: Exclude<MessageState, 'dead'>,
    offset: number,
    limit: number,
  ): Promise<MessageInfo<T>[]> {
    const { partitions } = this.layouts.get(topic);
    // Of several partitions, each one's first offset + limit, merged in serving order.
    const [first, count] = partitions.length === 1 ? [offset, limit] : [0, offset + limit];
    const replies = await Promise.all(
      partitions.map((keys) => this.scripts.run<(string | null)[]>('list', topic, keys, [state, first, count])),
    );
    const infos = replies.flatMap((reply) => decodeListReply<T>(state, reply, this.defaultMaxAttempts));
    if (partitions.length === 1) return infos;
    const order = ORDER[state];
    return infos.sort((a, b) => order(a) - order(b)).slice(offset, offset + limit);
  }

  /** Removes the message whatever its state; the state it was in, or null when there was none. */
  async cancel(topic: string, id: string): Promise<MessageState | null> {
    return this.inAnyPartition(topic, id, (keys) => this.scripts.run<MessageState | null>('cancel', topic, keys, [id]));
  }

  /**
   * Runs `call` in the partition of the id; when it finds nothing there (a grouped message
   * lives in its group's partition), in the others, one at a time: the first answer wins.
   */
  private async inAnyPartition<R>(topic: string, id: string, call: (keys: QueueKeys) => Promise<R | null>) {
    const { partitions }: TopicLayout = this.layouts.get(topic);
    const home = partitionOf(id, partitions.length);
    const found = await call(partitions[home]);
    if (found !== null || partitions.length === 1) return found;
    for (const [i, keys] of partitions.entries()) {
      if (i === home) continue;
      const answer = await call(keys);
      if (answer !== null) return answer;
    }
    return null;
  }
}
