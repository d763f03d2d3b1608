import type { ConsumerLiveness } from './consumer.interface';
import type { TopicHistory, TopicHistoryOptions } from './history.interface';
import type {
  DeadLetter,
  KeyedPushResult,
  PlainPushManyItem,
  PlainPushOptions,
  PushManyItem,
  PushOptions,
  PushResult,
  QueueGauges,
  QueueStats,
} from './message.interface';

/**
 * The producing and inspecting half of `RedisAckQueueService`: push, read counts, history and
 * dead letters, sweep them, check a topic's layout, ping, connect and close.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a `RedisAckQueueError` with a stable `code`.
 */
export interface RedisAckQueueProducerApi {
  /**
   * Waits until Redis answers (7.0 or newer); fails within connectTimeoutMs otherwise. The
   * module calls it at startup. Logs one line saying where it connected (see
   * `describeConnection()`; shown at the default `logLevel`), and a warning when Redis has
   * `appendonly` off. After a failure, a connection the service opened itself stops reconnecting.
   * @throws {RedisConnectionError} when Redis does not answer within `connectTimeoutMs`,
   *   refuses the credentials, or is older than 7.0.
   * @throws {UnsafeRedisConfigError} when Redis uses an `allkeys-*` maxmemory-policy and
   *   `allowEviction` is not set.
   * @throws {RedisCommandError | RedisUnavailableError} when Redis refuses `INFO` or the
   *   connection fails meanwhile.
   */
  connect(): Promise<void>;

  /**
   * Where the service connects, without credentials: the target (`redis://host:6379/0`,
   * `unix:/path`, `cluster(host:port,...)`, `sentinel(name@host:port,...)`), the key prefix and
   * whether TLS is on, e.g. `redis://127.0.0.1:6379/0 (prefix "ackq", TLS off)`.
   */
  describeConnection(): string;

  /**
   * Stores one message; resolves once Redis has it.
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @param payload - Any JSON value (`null` is fine, `undefined` is not).
   * @param options - The message's id, delay or due time, attempts and headers.
   * @returns The message's id, and whether it was a duplicate (an id that exists: nothing changed).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidPayloadError} when the payload is `undefined` or not plain JSON data.
   * @throws {PayloadTooLargeError} when its JSON is larger than `maxPayloadBytes`.
   * @throws {InvalidMessageIdError} when `options.id` is not 1-256 characters.
   * @throws {InvalidOptionError} when another option has a bad value.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {ReplicationTimeoutError} with `replicatedPushes`, when too few replicas confirmed in
   *   time (the message may be stored: push it again with the same id).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * const { id, duplicate } = await queue.push('order.created', { orderId: order.id }, { id: order.id });
   * await queue.push('order.payment-timeout', { orderId: order.id }, { delayMs: 15 * 60_000 });
   * ```
   */
  push<T>(topic: string, payload: T, options?: PlainPushOptions | null): Promise<PushResult>;
  /**
   * Pushes with a key mode (`debounce`, `throttle` or `supersede`): answers what the push did to
   * its key (see KeyedPushResult). Throws as the push above, and InvalidOptionError for two key
   * modes at once, or a key mode with `id` or `group` (or, for debounce, `delayMs` or `availableAt`).
   */
  push<T>(topic: string, payload: T, options?: PushOptions | null): Promise<KeyedPushResult>;

  /**
   * Stores many messages in one round trip; one bad item rejects the whole call before Redis is touched.
   * @returns One result per item, in order: its id, and whether it was a duplicate.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `items` is not an array, an item is not an object, or an
   *   option of one has a bad value.
   * @throws {InvalidPayloadError | PayloadTooLargeError | InvalidMessageIdError} as for `push`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {ReplicationTimeoutError} with `replicatedPushes`, when too few replicas confirmed in
   *   time (the messages may be stored: push them again with the same ids).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  pushMany<T>(topic: string, items: PlainPushManyItem<T>[]): Promise<PushResult[]>;
  /** pushMany with items of a key mode: one KeyedPushResult per item, in order (a key's pushes apply in order). */
  pushMany<T>(topic: string, items: PushManyItem<T>[]): Promise<KeyedPushResult[]>;

  /**
   * Checks that Redis holds `topic` with this process' partition count; PartitionCountMismatchError otherwise.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError} when Redis cannot be reached or refuses the call.
   */
  checkTopic(topic: string): Promise<void>;

  /**
   * How many messages are in each state.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  stats(topic: string): Promise<QueueStats>;

  /**
   * A page of dead letters, oldest first.
   * @param options.offset - How many to skip (a whole number >= 0). Default 0.
   * @param options.limit - Most to return (1-10,000). Default 100.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `offset` or `limit` is out of range.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  deadLetters<T = unknown>(
    topic: string,
    options?: { offset?: number; limit?: number } | null,
  ): Promise<DeadLetter<T>[]>;

  /**
   * Sends dead letters (the given ids, or all) back to ready with attempts reset; returns how many.
   * A flow's parent dead as `child-failed` is requeued with its failed children (down the tree) and
   * waits for them (`waiting-children`); one whose failed child is gone for good stays (see
   * docs/flows.md).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {FlowChildGoneError} when a given id is a flow's parent whose failed child was cancelled
   *   or its dead letter deleted (nothing is requeued).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `ids` is not an array.
   * @throws {InvalidMessageIdError} when one of the ids is not 1-256 characters.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  requeueDead(topic: string, ids?: string[]): Promise<number>;

  /**
   * Deletes dead letters (the given ids, or all) for good; returns how many.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `ids` is not an array.
   * @throws {InvalidMessageIdError} when one of the ids is not 1-256 characters.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  purgeDead(topic: string, ids?: string[]): Promise<number>;

  /**
   * Round trip to Redis in ms (of a Cluster: to its slowest master).
   * @param timeoutMs - How long to wait for the answer. Default: `commandTimeoutMs`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {RedisUnavailableError} when Redis does not answer within the bound.
   */
  ping(timeoutMs?: number): Promise<number>;

  /**
   * The counts of `stats` and the age of the oldest ready message, read in one script call per
   * partition (for metrics and health checks).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} as for `stats`.
   */
  gauges(topic: string): Promise<QueueGauges>;

  /**
   * The topic's history over a range, one point per step: what was pushed, acked, retried,
   * dead-lettered and cancelled in it, and the wait and handling times of its deliveries
   * (p50/p95/p99, mean). Every producer and consumer process records what it did (see the
   * `history` option) and adds it to Redis once a second, so the last second may be missing
   * yet. Kept for 25 hours, per minute of the Redis server's clock; a partitioned topic has
   * one history. Reading it is one script call.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `from` or `to` is not a time in epoch ms, `from` is after
   *   `to`, `stepMs` is not a whole number of minutes (1 minute to 25 hours), `lastMs` is not 1
   *   minute to 25 hours, or both `from` and `lastMs` are given.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} as for `stats`.
   */
  history(topic: string, options?: TopicHistoryOptions | null): Promise<TopicHistory>;

  /** What a health check sees of each consumer running in this process: last wait, last heartbeat, stalls. */
  consumerLiveness(): ConsumerLiveness[];

  /**
   * Drains this service's consumers (unfinished messages go back to ready at once), then closes its connections.
   * From the first call on, every method but `stats`, `deadLetters` and `waitUntilIdle` fails
   * with QueueClosedError; later calls return the same promise. A client you passed in is not closed.
   * @param drainMs - How long running handlers may finish (ms). Default: the service's
   *   `drainMs` (10 s unless set).
   */
  close(drainMs?: number): Promise<void>;
}
