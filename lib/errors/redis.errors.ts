import { MESSAGES } from '../redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** A queue key already holds a value of another type: nothing was changed. */
export class QueueKeyTypeError extends RedisAckQueueError {
  readonly code = 'KEY_TYPE';
  constructor(readonly key: string, readonly actualType: string, readonly expectedType: string) {
    super(MESSAGES.keyType(key, actualType, expectedType));
  }
}

/**
 * Redis answered a queue operation with an error (OOM, READONLY, NOAUTH, NOPERM, ...).
 * `redisCode` is the first word of the reply; `operation` names the queue call that failed.
 */
export class RedisCommandError extends RedisAckQueueError {
  readonly code = 'REDIS_COMMAND';
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

/** Redis could not be reached or refused the credentials when the service started. */
export class RedisConnectionError extends RedisAckQueueError {
  readonly code = 'REDIS_CONNECTION';
  constructor(readonly target: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Redis is set up in a way that can lose messages silently (an evicting maxmemory-policy). */
export class UnsafeRedisConfigError extends RedisAckQueueError {
  readonly code = 'UNSAFE_REDIS_CONFIG';
  constructor(readonly target: string, readonly setting: string, readonly value: string, message: string) {
    super(message);
  }
}

/** The service was closed; nothing more can be pushed or consumed through it. */
export class QueueClosedError extends RedisAckQueueError {
  readonly code = 'QUEUE_CLOSED';
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
  readonly code = 'REPLICATION_TIMEOUT';
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
  readonly code = 'PARTITION_COUNT_MISMATCH';
  constructor(readonly topic: string, readonly configured: number, readonly stored: number) {
    super(MESSAGES.partitionMismatch(topic, configured, stored));
  }
}

/**
 * No connection to Redis could carry a call (Redis down, the connection closed, an outage
 * longer than the retries), or Redis did not answer within `commandTimeoutMs`: the call may
 * or may not have reached Redis, and one that timed out may still take effect when Redis
 * returns. `operation` names the call. Consumers pause and resume by themselves; a producer
 * may retry the call (a push with the same id is deduplicated).
 */
export class RedisUnavailableError extends RedisAckQueueError {
  readonly code = 'REDIS_UNAVAILABLE';
  constructor(
    readonly operation: string,
    readonly topic: string | undefined,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.redisUnavailable(operation, topic, reason), options);
  }
}
