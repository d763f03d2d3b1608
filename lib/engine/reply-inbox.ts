import type { RedisClient } from './connection';
import { closeSubscriber, openSubscriber } from './subscriber';

/**
 * A caller's pub/sub channel, where reply.lua announces the id of each request answered. A
 * notice can be missed while the connection is down; `onResubscribed` runs after each
 * reconnect so the caller looks for the replies it may have missed.
 */
export class ReplyInbox {
  private readonly subscriber: RedisClient;
  private opened = false;

  constructor(
    client: RedisClient,
    readonly channel: string,
    onAnswered: (id: string) => void,
    onResubscribed: () => void,
  ) {
    this.subscriber = openSubscriber(client, (_channel, id) => onAnswered(id));
    this.subscriber.on('ready', () => {
      if (this.opened) onResubscribed();
    });
  }

  /** Resolves once subscribed: requests sent from then on are heard. */
  async open(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
    this.opened = true;
  }

  close(): Promise<void> {
    return closeSubscriber(this.subscriber);
  }
}
