import { randomUUID } from 'node:crypto';
import { heldDeliveryOf } from '../engine/consumer-engine';
import type { ReplyInbox } from '../engine/redis/reply-inbox';
import type { ReplyWrite, RequestRef } from '../engine/stores/request-replies';
import type { MessageContext } from '../interfaces';
import type { QueueCore } from './queue-core';

/**
 * The key of the service's internal accessor of its request replies (`service[REQUEST_REPLIES]()`),
 * for the Nest transport of this package: not part of the public API.
 */
export const REQUEST_REPLIES: unique symbol = Symbol('nestjs-redis-ack-queue.requestReplies');

/** Where a caller waits for its replies: `<prefix>:reply-to:<uuid>`, one per caller. */
const CHANNEL_MARK = ':reply-to:';

/**
 * Request-reply over ordinary messages, for the Nest transport: a caller's channel, the
 * fenced reply of a running request (see RequestReplies), and the taking of a reply. A part of
 * RedisAckQueueService, reached through REQUEST_REPLIES.
 */
export class QueueReplies {
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
   * Stores the reply of the running delivery of `context` and announces it on `channel`:
   * 'lost' when its lease is no longer this delivery's, 'answered' when a reply was stored before.
   */
  send(context: MessageContext, reply: string, ttlMs: number, channel: string): Promise<ReplyWrite> {
    return this.core.call('reply to a request', context.topic, () => {
      const lease = heldDeliveryOf(context);
      if (!lease) return Promise.resolve<ReplyWrite>('lost');
      return this.core.engine.replies.write(context.topic, lease, reply, ttlMs, channel);
    });
  }

  /** Whether the handler of this delivery deferred it (`retryLater`, `rateLimited`): it is not answered now. */
  deferred(context: MessageContext): boolean {
    return heldDeliveryOf(context)?.deferred ?? false;
  }

  /** Whether the request was answered already (by an earlier delivery). */
  answered(topic: string, request: RequestRef): Promise<boolean> {
    return this.core.call('look up a reply', topic, () => this.core.engine.replies.answered(topic, request));
  }

  /** The request's reply, once; undefined while there is none (or it was taken). */
  take(topic: string, request: RequestRef): Promise<string | undefined> {
    return this.core.call('take a reply', topic, () => this.core.engine.replies.take(topic, request));
  }

  /** Listens on a caller channel (see ReplyInbox). */
  inbox(channel: string, onAnswered: (id: string) => void, onResubscribed: () => void): ReplyInbox {
    this.core.assertOpen('listen for replies');
    return this.core.engine.replyInbox(channel, onAnswered, onResubscribed);
  }
}
