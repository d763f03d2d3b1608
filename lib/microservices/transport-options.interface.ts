import type { QueueHandlerDefaults, RedisAckQueueOptions } from '../interfaces';

/**
 * The options of {@link RedisAckQueueServer}: those of `RedisAckQueueModule.forRoot` (the
 * connection, `prefix`, Cluster, Sentinel, TLS, `drainMs`...) and the handler defaults
 * (`concurrency`, `leaseMs`, `maxAttempts`, `backoff`, `timeoutMs`...), which a handler's
 * pattern decorator overrides through its extras:
 * `@EventPattern('order.created', { concurrency: 20, maxAttempts: 5 })`.
 */
export type RedisAckQueueServerOptions = RedisAckQueueOptions;

/**
 * The options of {@link RedisAckQueueClient}: the connection options of
 * `RedisAckQueueModule.forRoot` (connection, `prefix`, `replicatedPushes`...), and how long a
 * `send` waits for its reply.
 */
export interface RedisAckQueueClientOptions extends Omit<
  RedisAckQueueOptions,
  keyof QueueHandlerDefaults | 'scheduler' | 'topics'
> {
  /**
   * How long a `send` waits for its reply before it errors with a `RequestTimeoutError` (ms, 1
   * to 2^31-1; default 30,000). A {@link RedisAckQueueRecord} can give one request its own.
   */
  timeoutMs?: number;
}
