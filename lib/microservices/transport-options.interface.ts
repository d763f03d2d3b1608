import type { Deserializer, Serializer } from '@nestjs/microservices';
import type { QueueHandlerDefaults, RedisAckQueueOptions } from '../interfaces';

/**
 * The options of {@link RedisAckQueueServer}: those of `RedisAckQueueModule.forRoot` (the
 * connection, `prefix`, Cluster, Sentinel, TLS, `drainMs`...) and the handler defaults
 * (`concurrency`, `leaseMs`, `maxAttempts`, `backoff`, `timeoutMs`...), which a handler's
 * pattern decorator overrides through its extras:
 * `@EventPattern('order.created', { concurrency: 20, maxAttempts: 5 })`.
 */
export interface RedisAckQueueServerOptions extends RedisAckQueueOptions {
  /**
   * Turns each of Nest's response packets of a request (`{ id, response, isDisposed }`, `{ id,
   * err }`) into what is stored as the reply, as Nest's transports do; a client reads them back
   * with its `deserializer`. Without it, replies are stored as the handler's values.
   */
  serializer?: Serializer;
  /**
   * Turns a message's body into the packet (`{ data, metadata }`) whose `data` the handler
   * receives, as Nest's transports do with what a client's `serializer` made (called with `{
   * channel: topic }`). Without it, the body is the data.
   */
  deserializer?: Deserializer;
}

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
  /**
   * Turns each outgoing packet (`{ pattern, data, metadata }`, with `id` for `send`) into the
   * body of its message, as Nest's transports do; the server reads it back with its
   * `deserializer`. Without it, the body is the data.
   */
  serializer?: Serializer;
  /**
   * Turns each response packet of a reply into `{ response, err, isDisposed }`, as Nest's
   * transports do (Nest's `IncomingResponseDeserializer` reads the replies of a server with a
   * `serializer` when it is left out).
   */
  deserializer?: Deserializer;
}
