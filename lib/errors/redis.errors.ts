import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** A queue key already holds a value of another type: nothing was changed. */
export class QueueKeyTypeError extends RedisAckQueueError {
  /** Always `KEY_TYPE`. */
  readonly code = 'KEY_TYPE';
  /**
   * @param key - The Redis key in the way.
   * @param actualType - The type the key holds (`string`, `list`, ...).
   * @param expectedType - The type the queue keeps there.
   */
  constructor(
    readonly key: string,
    readonly actualType: string,
    readonly expectedType: string,
  ) {
    super(MESSAGES.keyType(key, actualType, expectedType));
  }
}

/**
 * Redis answered a queue operation with an error (OOM, READONLY, NOAUTH, NOPERM, ...).
 * `redisCode` is the first word of the reply; `operation` names the queue call that failed.
 */
export class RedisCommandError extends RedisAckQueueError {
  /** Always `REDIS_COMMAND`. */
  readonly code = 'REDIS_COMMAND';
  /**
   * @param operation - The queue call that failed, such as `push`, `reserve` or `connect`.
   * @param topic - Its topic; undefined for a call without one.
   * @param redisCode - The first word of Redis' reply (`ERR` when it has none).
   * @param reply - Redis' reply, quoted in the message.
   * @param options - `cause`: a redacted copy of the client's error.
   */
  constructor(
    readonly operation: string,
    readonly topic: string | undefined,
    readonly redisCode: string,
    reply: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.redisCommand(operation, topic, reply), options);
  }
}

/**
 * Redis could not be reached or refused the credentials when the service started, or is
 * older than 7.0. Thrown by `connect()` (and so by the module's startup).
 */
export class RedisConnectionError extends RedisAckQueueError {
  /** Always `REDIS_CONNECTION`. */
  readonly code = 'REDIS_CONNECTION';
  /**
   * @param target - Where the client points, without credentials (`redis://host:6379/0`, `cluster(...)`, `sentinel(...)`).
   * @param message - The error text.
   * @param options - `cause`: a redacted copy of the client's last error, when there is one.
   */
  constructor(
    readonly target: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Redis is set up in a way that can lose messages silently (an `allkeys-*` maxmemory-policy).
 * Thrown by `connect()` unless `allowEviction` is set.
 */
export class UnsafeRedisConfigError extends RedisAckQueueError {
  /** Always `UNSAFE_REDIS_CONFIG`. */
  readonly code = 'UNSAFE_REDIS_CONFIG';
  /**
   * @param target - Where the client points, without credentials.
   * @param setting - The unsafe setting: `maxmemory-policy`.
   * @param value - Its value, such as `allkeys-lru`.
   * @param message - The error text, with the fix.
   */
  constructor(
    readonly target: string,
    readonly setting: string,
    readonly value: string,
    message: string,
  ) {
    super(message);
  }
}

/** The service was closed; nothing more can be pushed or consumed through it. */
export class QueueClosedError extends RedisAckQueueError {
  /** Always `QUEUE_CLOSED`. */
  readonly code = 'QUEUE_CLOSED';
  /** @param operation - What was attempted, such as `push` or `consume`. */
  constructor(readonly operation: string) {
    super(MESSAGES.closed(operation));
  }
}

/**
 * Fewer replicas than `replicatedPushes.replicas` confirmed a push within its timeout. The
 * messages are stored on the master but could be lost by a failover: push them again with
 * the same ids (deduplicated) or treat them as not sent.
 */
export class ReplicationTimeoutError extends RedisAckQueueError {
  /** Always `REPLICATION_TIMEOUT`. */
  readonly code = 'REPLICATION_TIMEOUT';
  /**
   * @param topic - The topic of the push.
   * @param ids - Ids of the unconfirmed messages (of a partitioned topic, those of one
   *   partition: push the whole call again to be safe).
   * @param confirmed - How many replicas confirmed (the answer of Redis `WAIT`).
   * @param wanted - `replicatedPushes.replicas`.
   */
  constructor(
    readonly topic: string,
    readonly ids: string[],
    readonly confirmed: number,
    readonly wanted: number,
  ) {
    super(MESSAGES.replicationTimeout(topic, ids.length, confirmed, wanted));
  }
}

/** This process and Redis disagree on how many partitions a topic has: no message is moved. */
export class PartitionCountMismatchError extends RedisAckQueueError {
  /** Always `PARTITION_COUNT_MISMATCH`. */
  readonly code = 'PARTITION_COUNT_MISMATCH';
  /**
   * @param topic - The topic.
   * @param configured - Its partition count in this process (the `topics` option; 1 when unset).
   * @param stored - Its partition count recorded in Redis.
   */
  constructor(
    readonly topic: string,
    readonly configured: number,
    readonly stored: number,
  ) {
    super(MESSAGES.partitionMismatch(topic, configured, stored));
  }
}

/**
 * No connection to Redis could carry a call (Redis down, the connection closed, an outage
 * longer than the retries), or Redis did not answer within `commandTimeoutMs`: the call may
 * or may not have reached Redis, and one that timed out may still take effect when Redis
 * returns. `operation` names the call. Consumers pause and resume by themselves; a producer
 * may retry the call (a push with the same id is deduplicated while its first copy is stored,
 * or kept as completed by `keepCompleted`: a copy already acked and deleted is not remembered).
 */
export class RedisUnavailableError extends RedisAckQueueError {
  /** Always `REDIS_UNAVAILABLE`. */
  readonly code = 'REDIS_UNAVAILABLE';
  /**
   * @param operation - The queue call that failed, such as `push` or `reserve`.
   * @param topic - Its topic; undefined for a call without one.
   * @param reason - The first line of the client's error, such as `Connection is closed.`.
   * @param options - `cause`: a redacted copy of the client's error, when there is one.
   */
  constructor(
    readonly operation: string,
    readonly topic: string | undefined,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.redisUnavailable(operation, topic, reason), options);
  }
}
