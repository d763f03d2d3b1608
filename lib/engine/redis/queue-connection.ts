import { Cluster, Redis } from 'ioredis';
import { mapRedisError } from '../../errors/map-redis-error';
import type { RedisAckQueueConnection } from '../../interfaces';
import type { QueueLogger } from '../../observability/queue-logger';
import { DEFAULTS } from '../../common/redis-ack-queue.constants';
import { MESSAGES } from '../../common/redis-ack-queue.messages';
import { describeTarget, openConnection, usesTls, waitUntilReady, type RedisClient } from './connection';
import { withinBound } from './call-bound';
import { preflight } from './preflight';

/**
 * A service's command connection: opened from the connection option (or the user's own
 * client, which stays theirs and is never closed here), checked at startup, reported once
 * per outage, closed last. It bounds how long each of the service's calls waits for Redis.
 */
export class QueueConnection {
  readonly client: RedisClient;
  private readonly owned: boolean;
  private closed = false;
  /** Removes each listener onReconnect() added. */
  private readonly listeners: (() => void)[] = [];

  constructor(
    connection: RedisAckQueueConnection | undefined,
    /** Longest wait of one call of the service for Redis' answer. */
    private readonly commandTimeoutMs: number,
    private readonly logger: QueueLogger,
  ) {
    const { client, owned } = openConnection(connection ?? DEFAULTS.connection);
    this.client = client;
    this.owned = owned;
    if (owned) this.reportOutages();
    if (connection === undefined) logger.warn(MESSAGES.defaultConnection(DEFAULTS.connection));
  }

  /** Where the client points, without credentials (`redis://host:6379/0`, `cluster(...)`, `sentinel(...)`). */
  get target(): string {
    return describeTarget(this.client);
  }

  /** Whether the client speaks TLS to Redis. */
  get tls(): boolean {
    return usesTls(this.client);
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
   * `work`, the Redis work of one call of the service, rejected with RedisUnavailableError
   * naming `operation` after commandTimeoutMs (+ `extraMs`). Consumers' own calls are not
   * bounded: they wait through outages and resume.
   */
  within<T>(operation: string, topic: string | undefined, work: Promise<T>, extraMs = 0): Promise<T> {
    return withinBound(work, this.commandTimeoutMs + extraMs, operation, topic);
  }

  /**
   * Milliseconds from sending PING until Redis answered; of a Cluster, every master is pinged
   * at once and the slowest answer counts (before the first slots refresh: whichever node
   * the client picks). Rejects with RedisUnavailableError after `timeoutMs` (default commandTimeoutMs).
   */
  ping(timeoutMs?: number): Promise<number> {
    if (timeoutMs === undefined) return withinBound(this.roundTrip(), this.commandTimeoutMs, 'ping');
    return withinBound(this.roundTrip(), timeoutMs, 'ping', undefined, 'the timeout given to ping');
  }

  private async roundTrip(): Promise<number> {
    const { client } = this;
    const started = performance.now();
    try {
      const masters = client instanceof Cluster ? client.nodes('master') : [];
      await Promise.all(masters.length > 0 ? masters.map((node) => node.ping()) : [client.ping()]);
    } catch (error) {
      throw mapRedisError(error, 'ping');
    }
    return Math.round((performance.now() - started) * 1000) / 1000;
  }

  /**
   * Calls `listener` each time the connection is ready again after having been ready: a plain
   * client's reconnect; of a Cluster, its own, any node's reconnect and each slots refresh that
   * follows a node's failure (a failover moves slots). It may be called more than once for one outage.
   */
  onReconnect(listener: () => void): void {
    const { client } = this;
    let ready = client.status === 'ready';
    this.listen(client, 'ready', () => {
      if (ready) listener();
      ready = true;
    });
    if (!(client instanceof Cluster)) return;
    // A slots refresh after a node failed or left (a failover): not the routine ones.
    let nodeTrouble = false;
    this.listen(client, 'node error', () => (nodeTrouble = true));
    this.listen(client, '-node', () => (nodeTrouble = true));
    this.listen(client, 'refresh', () => {
      if (!ready || !nodeTrouble) return;
      nodeTrouble = false;
      listener();
    });
    const watchNode = (node: Redis) => {
      let nodeReady = node.status === 'ready';
      this.listen(node, 'ready', () => {
        if (nodeReady && ready) listener();
        nodeReady = true;
      });
    };
    client.nodes().forEach(watchNode);
    this.listen(client, '+node', watchNode);
  }

  /** Adds a listener that close() removes (a client the user passed outlives the service). */
  private listen<A extends unknown[]>(emitter: RedisClient, event: string, listener: (...args: A) => void): void {
    emitter.on(event, listener as (...args: unknown[]) => void);
    this.listeners.push(() => emitter.off(event, listener as (...args: unknown[]) => void));
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
    this.listeners.splice(0).forEach((remove) => remove());
    if (!this.owned || this.client.status === 'end') return;
    // Not ready (never connected, or between reconnects): QUIT would open a connection only to
    // close it, or wait on the pending attempt; ending it at once leaves no timer behind.
    if (this.client.status !== 'ready') this.client.disconnect();
    else await this.client.quit().catch(() => this.client.disconnect());
  }

  /**
   * One warning per outage instead of ioredis' "unhandled error event" on every retry: "Cannot
   * connect" (with what to check) until the connection was first ready, "Lost the connection" after.
   */
  private reportOutages(): void {
    let down = false;
    let everReady = false;
    this.client.on('error', (failure: Error) => {
      if (down || this.closed) return;
      down = true;
      const target = describeTarget(this.client);
      // A Cluster reports "Failed to refresh slots cache."; the reason is the last seed's own error.
      const reason = ((failure as { lastNodeError?: Error | null }).lastNodeError ?? failure).message;
      this.logger.warn(everReady ? MESSAGES.connectionLost(target, reason) : MESSAGES.connectRetrying(target, reason));
    });
    this.client.on('ready', () => {
      if (down && everReady && !this.closed) this.logger.log(MESSAGES.connectionRestored(describeTarget(this.client)));
      down = false;
      everReady = true;
    });
  }
}
