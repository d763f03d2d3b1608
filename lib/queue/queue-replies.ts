import { randomUUID } from 'node:crypto';
import type { Lease } from '../engine/codecs/wire-format';
import type { ReplyInbox, ReplyNotices } from '../engine/redis/reply-inbox';
import type { ReplyWrite, RequestRef } from '../engine/stores/request-replies';
import type { QueueCore } from './queue-core';
import type { ServiceReplies } from './queue-internals';

/** Where a caller waits for its replies: `<prefix>:reply-to:<uuid>`, one per caller. */
const CHANNEL_MARK = ':reply-to:';
/** A caller channel's twin, where whole replies come: `<prefix>:reply-to:<uuid>:inline`. */
const INLINE_SUFFIX = ':inline';

/**
 * Request-reply over ordinary messages, for the Nest transport: a caller's channel, the
 * fenced reply of a running request (see RequestReplies), and the taking of a reply. A part of
 * RedisAckQueueService, reached through queue-internals.
 */
export class QueueReplies implements ServiceReplies {
  constructor(private readonly core: QueueCore) {}

  /** A new caller channel of this prefix. */
  newChannel(): string {
    return `${this.core.settings.prefix}${CHANNEL_MARK}${randomUUID()}`;
  }

  /** Whether `text` names a caller channel of this prefix (a request's headers are anyone's to write). */
  isChannel(text: string | undefined): text is string {
    const start = `${this.core.settings.prefix}${CHANNEL_MARK}`;
    return text !== undefined && text.startsWith(start) && /^[0-9a-f-]{36}$/.test(text.slice(start.length));
  }

  /**
   * Stores the reply of a running delivery (its lease, see heldDeliveryOf: undefined for a context
   * made elsewhere), sealed by the topic's codec if it has one, and announces it on `channel` (with
   * `inline`, the reply itself on its inline twin): 'lost' when its lease is no longer this delivery's, 'answered' when a reply was stored
   * before.
   */
  send(
    topic: string,
    lease: Lease | undefined,
    reply: string,
    ttlMs: number,
    channel: string,
    inline: boolean,
  ): Promise<ReplyWrite> {
    return this.core.call('reply to a request', topic, async () => {
      if (!lease) return 'lost';
      const inlineChannel = inline ? channel + INLINE_SUFFIX : '';
      // Of a topic with a codec, the reply is stored and published sealed, as its request was pushed.
      const text = await this.core.codecs.seal(topic, reply);
      return this.core.engine.replies.write(topic, lease, text, ttlMs, channel, inlineChannel);
    });
  }

  /** A reply's text as its caller reads it: opened when its topic's codec sealed it (see ValueCodecs). */
  async open(topic: string, stored: string): Promise<string> {
    return this.core.codecs.open(topic, stored);
  }

  /** Whether the request was answered already (by an earlier delivery). */
  answered(topic: string, request: RequestRef): Promise<boolean> {
    return this.core.call('look up a reply', topic, () => this.core.engine.replies.answered(topic, request));
  }

  /** The request's reply, once; undefined while there is none (or it was taken). */
  take(topic: string, request: RequestRef): Promise<string | undefined> {
    return this.core.call('take a reply', topic, () => this.core.engine.replies.take(topic, request));
  }

  /** Marks a reply its caller heard whole as taken (see RequestReplies). */
  markTaken(topic: string, request: RequestRef): Promise<void> {
    return this.core.call('take a reply', topic, () => this.core.engine.replies.markTaken(topic, request));
  }

  /** Listens on a caller channel and its inline twin (see ReplyInbox). */
  inbox(channel: string, notices: ReplyNotices): ReplyInbox {
    this.core.assertOpen('listen for replies');
    return this.core.engine.replyInbox(channel, channel + INLINE_SUFFIX, notices);
  }
}
