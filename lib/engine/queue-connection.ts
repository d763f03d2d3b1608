import { Redis } from 'ioredis';
import { mapRedisError } from '../errors/map-redis-error';
import type { RedisAckQueueConnection } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import { DEFAULTS } from '../redis-ack-queue.constants';
import { MESSAGES } from '../redis-ack-queue.messages';
import { describeTarget, openConnection, waitUntilReady, type RedisClient } from './connection';
import { preflight } from './preflight';

/**
 * A service's command connection: opened from the connection option (or the user's own
 * client, which stays theirs and is never closed here), checked at startup, reported once
 * per outage, closed last.
 */
export class QueueConnection {
  readonly client: RedisClient;
  private readonly owned: boolean;
  private closed = false;

  constructor(
    connection: RedisAckQueueConnection | undefined,
    private readonly logger: QueueLogger,
  ) {
    const { client, owned } = openConnection(connection ?? DEFAULTS.connection);
    this.client = client;
    this.owned = owned;
    if (owned) this.reportOutages();
  }

  /** Waits until Redis answers (7.0 or newer, a safe memory policy); fails within timeoutMs otherwise. */
  async open(timeoutMs: number, allowEviction: boolean): Promise<void> {
    try {
      await waitUntilReady(this.client, timeoutMs);
      await preflight(this.client, allowEviction, this.logger);
    } catch (error) {
      if (this.owned) this.giveUp();
      throw mapRedisError(error, 'connect');
    }
  }

  /**
   * Stops reconnecting after a failed start, so the process can exit and later calls fail
   * at once. ioredis leaves a client disconnected between two reconnect attempts in
   * 'reconnecting' for good, its queued commands pending forever: there the pending attempt
   * runs instead, with retries off, and fails them.
   */
  private giveUp(): void {
    const { client } = this;
    if (client instanceof Redis && client.status === 'reconnecting') {
      client.options.retryStrategy = () => null;
      client.once('ready', () => client.disconnect());
    } else {
      client.disconnect();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.owned && this.client.status !== 'end') await this.client.quit().catch(() => this.client.disconnect());
  }

  /** One warning per outage instead of ioredis' "unhandled error event" on every retry. */
  private reportOutages(): void {
    let down = false;
    this.client.on('error', (error: Error) => {
      if (down || this.closed) return;
      down = true;
      this.logger.warn(MESSAGES.connectionLost(describeTarget(this.client), error.message));
    });
    this.client.on('ready', () => {
      if (down && !this.closed) this.logger.log(MESSAGES.connectionRestored(describeTarget(this.client)));
      down = false;
    });
  }
}
