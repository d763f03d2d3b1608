import { Cluster } from 'ioredis';
import type { RedisClient } from './connection';

/**
 * A pub/sub connection of its own, duplicated from the service's client (a subscribed
 * connection can run nothing else), and the one owner of the channels it listens to. Its
 * errors are swallowed: a missed notice is covered by whoever listens (each says how).
 *
 * After a reconnect it subscribes again itself, a failure caught: ioredis' own resubscribe of
 * a plain client sends SUBSCRIBE with no handler, so closing the connection while that is
 * under way (a shutdown just after Redis came back) left an unhandled rejection, which ends a
 * Node process by default. A Cluster resubscribes through a node of its choice and catches
 * its failures; there ioredis' way stays.
 */
export class Subscriber {
  private readonly connection: RedisClient;
  private readonly channels = new Set<string>();
  private readonly plain: boolean;
  private everReady = false;

  constructor(
    client: RedisClient,
    onMessage: (channel: string, text: string) => void,
    /** After each reconnect, once subscribed again: notices published meanwhile may be missed. */
    private readonly onResubscribed: () => void = () => undefined,
  ) {
    this.plain = !(client instanceof Cluster);
    this.connection =
      client instanceof Cluster
        ? client.duplicate(undefined, { enableAutoPipelining: false })
        : client.duplicate({ enableAutoPipelining: false, autoResubscribe: false });
    this.connection.on('error', () => undefined);
    this.connection.on('message', onMessage);
    this.connection.on('ready', () => this.ready());
  }

  /** Resolves once Redis confirmed the subscription (rejects while it is unreachable). */
  async subscribe(...channels: string[]): Promise<void> {
    for (const channel of channels) this.channels.add(channel);
    await this.connection.subscribe(...channels);
  }

  unsubscribe(channel: string): void {
    if (!this.channels.delete(channel)) return;
    this.connection.unsubscribe(channel).catch(() => undefined);
  }

  /** Politely when connected, at once otherwise (a QUIT would wait for Redis to come back). */
  async close(): Promise<void> {
    this.channels.clear();
    const { connection } = this;
    if (connection.status !== 'ready') {
      connection.disconnect();
      return;
    }
    await connection.quit().catch(() => connection.disconnect());
  }

  private ready(): void {
    if (!this.everReady) {
      this.everReady = true;
      return;
    }
    if (this.channels.size === 0) return;
    if (!this.plain) return this.onResubscribed();
    // A failure (Redis went away again, or close() came first) waits for the next 'ready'.
    this.connection.subscribe(...this.channels).then(this.onResubscribed, () => undefined);
  }
}
