import type { RedisClient } from './connection';
import { Subscriber } from './subscriber';

/** What a caller hears on its channels: a reply's id (to take it), or the reply itself. */
export interface ReplyNotices {
  /** An id on the caller's channel: its reply is stored (announced by a server that sends ids). */
  answered(id: string): void;
  /** A whole reply on the caller's inline channel (the reply's JSON text). */
  replied(id: string, reply: string): void;
  /** After each reconnect, once subscribed again: notices published meanwhile may be missed. */
  resubscribed(): void;
}

/**
 * A caller's pub/sub channels, where reply.lua announces each request answered: on `channel`
 * the id (from servers that do not send whole replies), on `inlineChannel` the reply itself. A
 * notice can be missed while the connection is down; `resubscribed` runs after each reconnect,
 * once subscribed again, so the caller looks for the replies it may have missed.
 */
export class ReplyInbox {
  private readonly subscriber: Subscriber;

  constructor(
    client: RedisClient,
    readonly channel: string,
    readonly inlineChannel: string,
    notices: ReplyNotices,
  ) {
    this.subscriber = new Subscriber(
      client,
      (from, text) => {
        const inline = from === inlineChannel ? readInlineReply(text) : undefined;
        if (inline) notices.replied(inline.id, inline.reply);
        else if (from === channel) notices.answered(text);
      },
      () => notices.resubscribed(),
    );
  }

  /** Resolves once subscribed: requests sent from then on are heard. */
  async open(): Promise<void> {
    await this.subscriber.subscribe(this.channel, this.inlineChannel);
  }

  close(): Promise<void> {
    return this.subscriber.close();
  }
}

/**
 * A whole reply as reply.lua announces it on an inline channel: `<reply>\n<id>`. The reply is
 * JSON.stringify's text, which holds no newline, so the first one ends it; the id is the rest.
 */
function readInlineReply(notice: string): { id: string; reply: string } | undefined {
  const end = notice.indexOf('\n');
  return end < 0 ? undefined : { reply: notice.slice(0, end), id: notice.slice(end + 1) };
}
