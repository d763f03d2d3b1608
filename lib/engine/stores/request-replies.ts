import { TurnBatches } from '../../common/turn-batches';
import type { RedisClient } from '../redis/connection';
import { sendCommand } from '../redis/redis-command';
import type { ScriptRunner } from '../scripts/script-runner';
import { partitionOfMessage, type TopicLayouts } from '../scripts/topic-layouts';
import type { QueueKeys } from '../keys/queue-keys';
import type { Lease } from '../codecs/wire-format';

/** How a reply's write ended: stored and announced, refused (the lease is gone), or refused (answered before). */
export type ReplyWrite = 'sent' | 'lost' | 'answered';

/** A request as its reply is found: its id, and its group (which chose its partition). */
export interface RequestRef {
  id: string;
  group?: string;
}

/** What a taken reply leaves until it expires: not JSON, so never a reply. */
const TAKEN = '-';
const WRITES: ReplyWrite[] = ['lost', 'sent', 'answered'];

/** One reply waiting for its turn's script call. */
interface PendingWrite {
  topic: string;
  keys: QueueKeys;
  args: (string | number)[];
  resolve: (write: ReplyWrite) => void;
  reject: (error: unknown) => void;
}

/**
 * The replies of request-reply (the Nest transport). A request's reply is a STRING
 * `<replies><id>` in its message's partition slot, stored once, by the current lease, and
 * announced on its caller's channel (reply.lua): its id, or the reply itself on the caller's
 * inline channel. The caller takes it (or, having heard it whole, marks it taken), leaving a
 * one-byte mark until the TTL ends, so that the request delivered again is seen as answered.
 * The replies of one event-loop turn to one partition go in one script call.
 */
export class RequestReplies {
  private readonly writes = new TurnBatches<PendingWrite>((_slot, batch) => void this.send(batch));

  constructor(
    private readonly client: RedisClient,
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /**
   * Stores and announces the reply of a held request: its id on `channel`, or, given an
   * `inlineChannel`, the reply itself there (`<reply>\n<id>`, see ReplyInbox).
   */
  async write(
    topic: string,
    lease: Lease,
    reply: string,
    ttlMs: number,
    channel: string,
    inlineChannel = '',
  ): Promise<ReplyWrite> {
    const layout = this.layouts.get(topic);
    const partition = partitionOfMessage(layout, lease);
    const keys = layout.partitions[partition];
    const args = [lease.id, lease.token, reply, ttlMs, channel, inlineChannel];
    return new Promise((resolve, reject) =>
      this.writes.add(`${partition} ${topic}`, { topic, keys, args, resolve, reject }),
    );
  }

  private async send(batch: PendingWrite[]): Promise<void> {
    const [{ topic, keys }] = batch;
    try {
      const codes = await this.scripts.run<number[]>(
        'reply',
        topic,
        keys,
        batch.flatMap((each) => each.args),
      );
      for (let i = 0; i < batch.length; i++) batch[i].resolve(WRITES[codes[i]]);
    } catch (error) {
      for (const each of batch) each.reject(error);
    }
  }

  /** Whether the request was answered (its reply, or the mark of a taken one, has not expired). */
  async answered(topic: string, request: RequestRef): Promise<boolean> {
    const key = this.keyOf(topic, request);
    const count = await sendCommand(this.client, 'look up a reply', topic, () => this.client.exists(key));
    return count > 0;
  }

  /** The request's reply, once: later calls (and the request's redeliveries) find the mark. */
  async take(topic: string, request: RequestRef): Promise<string | undefined> {
    const key = this.keyOf(topic, request);
    // SET ... GET answers the value it replaced; XX creates nothing when the reply is gone.
    const previous = await sendCommand(
      this.client,
      'take a reply',
      topic,
      () => this.client.call('SET', key, TAKEN, 'XX', 'KEEPTTL', 'GET') as Promise<string | null>,
    );
    return previous === null || previous === TAKEN ? undefined : previous;
  }

  /** Marks a reply its caller heard whole as taken, as `take` would have (its answer unread). */
  async markTaken(topic: string, request: RequestRef): Promise<void> {
    const key = this.keyOf(topic, request);
    await sendCommand(this.client, 'take a reply', topic, () => this.client.call('SET', key, TAKEN, 'XX', 'KEEPTTL'));
  }

  private keyOf(topic: string, request: RequestRef): string {
    const layout = this.layouts.get(topic);
    return layout.partitions[partitionOfMessage(layout, request)].replies + request.id;
  }
}
