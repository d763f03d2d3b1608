import type { RedisClient } from './connection';
import { Subscriber } from './subscriber';

/** Called with the token and id of a leased message that `cancel()` removed. */
export type CancelListener = (token: string, id: string) => void;

/**
 * The one pub/sub connection of a service's consumers: cancel.lua publishes `<token> <id>`
 * on the cancelled channel of the message's partition, and every consumer of the topic, in
 * any process, hears it at once (not at its next heartbeat). The connection opens when the
 * first consumer listens and closes with the service; it works on a Cluster too (ioredis
 * subscribes through one node; the cluster bus delivers every node's publishes).
 */
export class CancelSignals {
  private subscriber: Subscriber | undefined;
  private readonly listeners = new Map<string, Set<CancelListener>>();
  /** Each channel's first SUBSCRIBE, settled once Redis confirmed it (or it failed). */
  private readonly subscribed = new Map<string, Promise<void>>();

  constructor(
    private readonly client: RedisClient,
    /** The cancelled channel of each partition of a topic. */
    private readonly channelsOf: (topic: string) => string[],
  ) {}

  /** Calls `listener` for each cancelled lease of `topic`; returns what stops it. */
  listen(topic: string, listener: CancelListener): () => void {
    const channels = this.channelsOf(topic);
    for (const channel of channels) {
      let set = this.listeners.get(channel);
      if (!set) {
        this.listeners.set(channel, (set = new Set()));
        // A failed subscribe (Redis down) is retried by ioredis on reconnect, as every subscription is.
        this.subscribed.set(
          channel,
          this.connection()
            .subscribe(channel)
            .catch(() => undefined),
        );
      }
      set.add(listener);
    }
    return () => {
      for (const channel of channels) {
        const set = this.listeners.get(channel);
        set?.delete(listener);
        if (set?.size === 0) {
          this.listeners.delete(channel);
          this.subscribed.delete(channel);
          this.subscriber?.unsubscribe(channel);
        }
      }
    };
  }

  /** Resolves once the subscriptions of `topic`'s channels were answered (a new consumer's start). */
  async ready(topic: string): Promise<void> {
    await Promise.all(this.channelsOf(topic).map((channel) => this.subscribed.get(channel) ?? Promise.resolve()));
  }

  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    this.listeners.clear();
    this.subscribed.clear();
    await subscriber?.close();
  }

  private connection(): Subscriber {
    // Its failures show as missed cancels at worst: the cancelled lease's late ack still changes nothing.
    this.subscriber ??= new Subscriber(this.client, (channel, text) => {
      const space = text.indexOf(' ');
      const token = text.slice(0, space);
      const id = text.slice(space + 1);
      for (const listener of this.listeners.get(channel) ?? []) listener(token, id);
    });
    return this.subscriber;
  }
}
