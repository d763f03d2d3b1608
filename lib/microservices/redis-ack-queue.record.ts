import type { PushOptions } from '../interfaces';

/** The options of one `emit` or `send` of a {@link RedisAckQueueClient}: a push's, and the reply's timeout. */
export type RedisAckQueueRecordOptions = PushOptions & {
  /**
   * `send` only: how long the caller waits for the reply (ms, 1 to 2^31-1), instead of the
   * client's `timeoutMs`.
   */
  timeoutMs?: number;
};

/**
 * Data with the options of its message, for one `emit` or `send` of a
 * {@link RedisAckQueueClient}: its id (a second push of a live id is a duplicate), delay,
 * priority, group, headers, maxAttempts, and for `send` the reply's timeout. The server's
 * handler receives `data` alone.
 * @example
 * ```ts
 * client.emit('order.created', new RedisAckQueueRecord(order, { id: `order-${order.id}`, priority: 5 }));
 * client.send('sum', new RedisAckQueueRecord([1, 2], { timeoutMs: 2_000 }));
 * ```
 */
export class RedisAckQueueRecord<T = unknown> {
  /**
   * @param data - The payload the handler receives.
   * @param options - The message's options.
   */
  constructor(
    readonly data: T,
    readonly options: RedisAckQueueRecordOptions = {},
  ) {}
}
