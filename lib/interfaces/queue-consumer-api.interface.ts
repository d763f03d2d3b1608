import type { Observable } from 'rxjs';
import type { QueueBatchHandlerFn } from './batch.interface';
import type { BatchOptions, QueueConsumer, QueueHandlerFn, QueueHandlerOptions } from './consumer.interface';
import type { RedisAckQueueEvent } from './events.interface';
import type { NackOptions, NackResult, ReserveOptions, ReservedMessage } from './message.interface';

/**
 * The consuming half of `RedisAckQueueService`: lease messages and settle them by hand, or
 * run a handler for every message of a topic; wait until a topic is idle; listen to events.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a `RedisAckQueueError` with a stable `code`.
 */
export interface RedisAckQueueConsumerApi {
  /** Queue events (pushed, reserved, acked, retried, dead, lease-lost, error); never payloads. Completes when the service closes. */
  readonly events$: Observable<RedisAckQueueEvent>;

  /**
   * Leases up to `count` messages; an empty array when none is ready. Partitions take turns.
   * Settle each one (ack, nack or release) before its lease runs out, or it is delivered
   * again. A message whose stored body is not valid JSON goes to the dead letters as `malformed`.
   * A message a codec sealed (see docs/codecs.md) is opened before it is returned; one that cannot
   * be is not returned: sealed by a codec this process lacks, it waits 5 s for a process that has
   * it (no attempt counted); else it goes to the dead letters as `undecodable`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `count`, `leaseMs` or `maxAttempts` is out of range.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  reserve<T = unknown>(topic: string, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]>;

  /**
   * Removes a message for good; false when nothing was acked (the lease was no longer this one, or no such message).
   * On a topic with `keepCompleted`, the message is kept as `completed` instead, with
   * `result` (any JSON value, at most `maxPayloadBytes`; sealed by the topic's codec, if it has
   * one, as a handler's result is); elsewhere `result` is ignored.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidStoredValueError} on a topic with `keepCompleted`, when `result` is not
   *   JSON data or is over `maxPayloadBytes` (nothing changed: ack again without it).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  ack(message: ReservedMessage, result?: unknown): Promise<boolean>;

  /**
   * Ends a lease after a failure: retried after the backoff (or delayMs) while attempts remain, else dead.
   * @returns `retry`, `dead`, or `lost` when the lease was no longer this one (nothing changed).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {InvalidOptionError} when `delayMs` is not a finite number >= 0, or the message's
   *   `maxAttempts` is out of range.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  nack(message: ReservedMessage, options?: NackOptions | null): Promise<NackResult>;

  /**
   * Moves the lease deadline to now + leaseMs; false when the lease was already lost.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {InvalidOptionError} when `leaseMs` is not a whole number from 10 to 2^31-1.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean>;

  /**
   * Hands a leased message back to the head of ready at once, not counting the attempt; false when the lease was lost.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  release(message: ReservedMessage): Promise<boolean>;

  /**
   * Starts a batch consumer of `topic` (option `batch`): `handler(messages, context)` gets up
   * to `batch.maxSize` messages at once (see `BatchContext`); `concurrency` counts batch
   * calls. Everything else is as for a single handler.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `handler` is not a function or an option is out of range.
   */
  consume<T = unknown>(
    topic: string,
    handler: QueueBatchHandlerFn<T>,
    options: QueueHandlerOptions & { batch: BatchOptions },
  ): QueueConsumer;
  /**
   * Runs `handler` for every message of `topic` until closed: leases, heartbeats, ack on resolve, nack with backoff on failure.
   * Unset options come from the service's. A bad argument throws at once.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `handler` is not a function or an option is out of range.
   */
  consume<T = unknown>(topic: string, handler: QueueHandlerFn<T>, options?: QueueHandlerOptions | null): QueueConsumer;

  /**
   * Resolves when `topic` has nothing ready, delayed or leased (for tests); IdleTimeoutError after `timeoutMs`.
   * @param options.timeoutMs - How long to wait (ms). Default 30 s.
   * @throws {IdleTimeoutError} when the topic still has work after `timeoutMs`.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  waitUntilIdle(topic: string, options?: { timeoutMs?: number } | null): Promise<void>;
}
