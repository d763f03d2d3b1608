import type { RedisClient } from './connection';
import { Subscriber } from './subscriber';

/**
 * A caller's pub/sub channel, where reply.lua announces the id of each request answered. A
 * notice can be missed while the connection is down; `onResubscribed` runs after each
 * reconnect, once subscribed again, so the caller looks for the replies it may have missed.
 */
export class ReplyInbox {
  private readonly subscriber: Subscriber;

  constructor(
    client: RedisClient,
    readonly channel: string,
    onAnswered: (id: string) => void,
    onResubscribed: () => void,
  ) {
    this.subscriber = new Subscriber(client, (_channel, id) => onAnswered(id), onResubscribed);
  }

  /** Resolves once subscribed: requests sent from then on are heard. */
  async open(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  close(): Promise<void> {
    return this.subscriber.close();
  }
}
