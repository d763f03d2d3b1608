import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** Two RedisAckQueueModule registrations of one queue name (two unnamed ones included). */
export class DuplicateQueueRegistrationError extends RedisAckQueueError {
  readonly code = 'DUPLICATE_QUEUE_REGISTRATION';
  constructor(
    /** The name registered twice (the default queue's name when it is the default). */
    readonly queue: string,
    isDefault: boolean,
  ) {
    super(MESSAGES.duplicateQueue(queue, isDefault));
  }
}

/** A `@QueueHandler` names a queue (its `queue` option) that no registration provides. */
export class UnknownQueueError extends RedisAckQueueError {
  readonly code = 'UNKNOWN_QUEUE';
  constructor(
    /** The handler, as `Class.method`. */
    readonly where: string,
    /** The queue name it asked for. */
    readonly queue: string,
    /** The queue names that are registered. */
    readonly registered: readonly string[],
  ) {
    super(MESSAGES.unknownQueue(where, queue, [...registered]));
  }
}

/**
 * A feature that needs an optional peer dependency (prom-client, @opentelemetry/api, @nestjs/terminus) was switched on
 * without it, or `nestjs-redis-ack-queue/microservices` was imported without @nestjs/microservices.
 */
export class MissingPeerDependencyError extends RedisAckQueueError {
  readonly code = 'MISSING_PEER_DEPENDENCY';
  constructor(
    /** The package to install. */
    readonly peer: string,
    /** What needs it. */
    readonly feature: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.missingPeer(peer, feature), options);
  }
}

/**
 * The testing override (`overrideQueueForTesting` of `nestjs-redis-ack-queue/testing`) replaces
 * the handler of a topic that no `@QueueHandler` consumes: a typo would otherwise pass silently.
 * Thrown when the app bootstraps, which then fails.
 */
export class UnknownHandlerOverrideError extends RedisAckQueueError {
  /** Always `UNKNOWN_HANDLER_OVERRIDE`. */
  readonly code = 'UNKNOWN_HANDLER_OVERRIDE';
  /**
   * @param topic - The topic the override names.
   * @param served - The topics the app's `@QueueHandler`s consume.
   */
  constructor(
    readonly topic: string,
    readonly served: readonly string[],
  ) {
    super(MESSAGES.unknownHandlerOverride(topic, [...served]));
  }
}
