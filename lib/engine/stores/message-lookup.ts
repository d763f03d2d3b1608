import type { MessageInfo, MessageState } from '../../interfaces';
import { linkOfField, type FlowLink } from '../codecs/flow-format';
import { decodeGetReply, decodeListOrder, decodeListReply, type GetReply } from '../codecs/lookup-format';
import { readMergedPage } from '../codecs/merged-pages';
import { partitionOf } from '../keys/partitions';
import type { QueueKeys } from '../keys/queue-keys';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayout, TopicLayouts } from '../scripts/topic-layouts';
import type { FlowEnds } from './flow-trees';

/** What cancel removed (see MessageLookup.cancel). */
export interface CancelledMessage {
  state: MessageState;
  children: FlowLink[];
}

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
    private readonly flows: FlowEnds,
  ) {}

  /** One message; `defaultMaxAttempts` is reported where neither the message nor its dead record has its own. */
  async get<T>(
    topic: string,
    id: string,
    defaultMaxAttempts = this.defaultMaxAttempts,
  ): Promise<MessageInfo<T> | null> {
    const reply = await this.inAnyPartition(topic, id, (keys) =>
      this.scripts.run<GetReply | null>('get', topic, keys, [id]),
    );
    return decodeGetReply<T>(id, reply, defaultMaxAttempts);
  }

  /**
   * A page of one state in serving order; with `preview` (bytes), rows carry their payload cut
   * in Redis instead of whole. Of several partitions, a page merged by readMergedPage.
   */
  async list<T>(
    topic: string,
    state: MessageState,
    offset: number,
    limit: number,
    preview = 0,
    defaultMaxAttempts = this.defaultMaxAttempts,
  ): Promise<MessageInfo<T>[]> {
    const { partitions } = this.layouts.get(topic);
    const rows = async (keys: QueueKeys, skip: number, take: number) => {
      const args = preview > 0 ? [state, skip, take, preview] : [state, skip, take];
      const reply = await this.scripts.run<(string | number | null)[]>('list', topic, keys, args);
      return decodeListReply<T>(state, reply, defaultMaxAttempts, preview > 0);
    };
    if (partitions.length === 1) return rows(partitions[0], offset, limit);
    return readMergedPage(partitions.length, offset, limit, {
      order: async (p, count) =>
        decodeListOrder(
          await this.scripts.run<(number | string)[]>('listOrder', topic, partitions[p], [state, count]),
          state === 'completed',
        ),
      rows: (p, skip, take) => rows(partitions[p], skip, take),
    });
  }

  /**
   * Removes the message whatever its state (with `liveOnly`, unless it has ended: dead or
   * completed): the state it was in (null when there was none, or it was left) and the fields of
   * a flow parent's children that may not have ended (to be cancelled in turn, live only). A
   * flow's child's parent has heard of it when this resolves.
   */
  async cancel(topic: string, id: string, liveOnly = false): Promise<CancelledMessage | null> {
    const { partitions } = this.layouts.get(topic);
    let partition = 0;
    const reply = await this.inAnyPartition(topic, id, (keys) => {
      partition = partitions.indexOf(keys);
      return this.scripts.run<[MessageState, string[], ...string[]] | null>(
        'cancel',
        topic,
        keys,
        liveOnly ? [id, 'live'] : [id],
      );
    });
    if (!reply) return null;
    const [state, written, ...children] = reply;
    // A flow's child: its parent hears it failed.
    await this.flows.passOn(topic, partition, written);
    return { state, children: children.map(linkOfField) };
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
