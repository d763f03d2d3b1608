import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * A `@QueueHandler` that cannot run: a second handler for a topic, a bad topic or option.
 * Thrown when the app bootstraps, which then fails.
 */
export class InvalidQueueHandlerError extends RedisAckQueueError {
  /** Always `INVALID_HANDLER`. */
  readonly code = 'INVALID_HANDLER';
  /**
   * @param where - The handler, as `Class.method`.
   * @param message - The error text.
   * @param options - `cause`: the error that made the handler invalid, when there is one.
   */
  constructor(
    readonly where: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /**
   * The error for a second handler of `topic`.
   *
   * @param topic - The topic both handle.
   * @param first - The handler found first, as `Class.method`.
   * @param second - The handler found second, as `Class.method` (the error's `where`).
   */
  static duplicate(topic: string, first: string, second: string): InvalidQueueHandlerError {
    return new InvalidQueueHandlerError(second, MESSAGES.duplicateHandler(topic, first, second));
  }

  /** The provider that replaces the handler's class (a test's overrideProvider) lacks the method. */
  static replacedWithoutMethod(where: string, method: string): InvalidQueueHandlerError {
    return new InvalidQueueHandlerError(where, MESSAGES.replacedWithoutMethod(where, method));
  }
}

/**
 * A class with `@QueueHandler` methods provided in two modules: Nest builds one instance per
 * module, and each would consume the same topics. Thrown when the app bootstraps, which then fails.
 */
export class QueueHandlerProvidedTwiceError extends RedisAckQueueError {
  /** Always `HANDLER_PROVIDED_TWICE`. */
  readonly code = 'HANDLER_PROVIDED_TWICE';
  /**
   * @param handlerClass - The class's name.
   * @param modules - The names of the two modules that provide it.
   */
  constructor(
    readonly handlerClass: string,
    readonly modules: readonly [string, string],
  ) {
    super(MESSAGES.handlerProvidedTwice(handlerClass, modules));
  }
}

/** An `@OnQueueEvent` listener that cannot be registered: an unknown event type, a bad topic or queue name. */
export class InvalidQueueListenerError extends RedisAckQueueError {
  readonly code = 'INVALID_LISTENER';
  constructor(
    /** The listener, as `Class.method`. */
    readonly where: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.invalidListener(where, reason), options);
  }
}

/**
 * The handler ran past its `timeoutMs`: the delivery counts as failed. It is the reason of
 * the handler's aborted `context.signal` and the error the delivery is nacked with.
 */
export class HandlerTimeoutError extends RedisAckQueueError {
  /** Always `HANDLER_TIMEOUT`. */
  readonly code = 'HANDLER_TIMEOUT';
  /** @param timeoutMs - The handler's `timeoutMs`. */
  constructor(readonly timeoutMs: number) {
    super(MESSAGES.handlerTimeout(timeoutMs));
  }
}

/**
 * The lease of a running message expired (the message may already run elsewhere). It is
 * the reason of the handler's aborted `context.signal` and the error of the `lease-lost` event.
 */
export class LeaseLostError extends RedisAckQueueError {
  /** Always `LEASE_LOST`. */
  readonly code = 'LEASE_LOST';
  /**
   * @param topic - The message's topic.
   * @param id - The message's id.
   */
  constructor(
    readonly topic: string,
    readonly id: string,
  ) {
    super(MESSAGES.leaseLost(topic, id));
  }
}

/**
 * The consumer is shutting down and the handler did not finish within the drain time: its
 * message was released for another consumer (the attempt not counted). It is the reason of
 * the handler's aborted `context.signal`.
 */
export class ConsumerShutdownError extends RedisAckQueueError {
  /** Always `CONSUMER_SHUTDOWN`. */
  readonly code = 'CONSUMER_SHUTDOWN';
  /** @param topic - The consumer's topic. */
  constructor(readonly topic: string) {
    super(MESSAGES.consumerShutdown(topic));
  }
}

/** `waitUntilIdle` ran out of time while the topic still had work. */
export class IdleTimeoutError extends RedisAckQueueError {
  /** Always `IDLE_TIMEOUT`. */
  readonly code = 'IDLE_TIMEOUT';
  /**
   * @param topic - The topic waited on.
   * @param timeoutMs - The `timeoutMs` that ran out.
   */
  constructor(
    readonly topic: string,
    readonly timeoutMs: number,
  ) {
    super(MESSAGES.idleTimeout(topic, timeoutMs));
  }
}

/**
 * Thrown from a handler (or by the enhancer pipeline, when a guard denies a message or a pipe
 * refuses its payload): the message cannot be handled, and retrying cannot change that. Its
 * delivery ends at once in the dead letters with reason `rejected` and this error's message,
 * whatever attempts are left. `reason` says why, without the payload.
 */
export class MessageRejectedError extends RedisAckQueueError {
  readonly code = 'MESSAGE_REJECTED';
  constructor(
    /** Why the message cannot be handled, without its payload. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.messageRejected(reason), options);
  }
}

/**
 * A guard threw (rather than returning false) on a queue message: often a guard written for
 * HTTP, applied app-wide (`APP_GUARD`), reading a request that a queue message does not have.
 * A {@link MessageRejectedError} (code `MESSAGE_REJECTED`; match this kind with `instanceof`):
 * the message is dead-lettered at once as `rejected`, with a text that names the guard and the
 * context type. A guard written for HTTP should return true when `context.getType() !== 'http'`.
 */
export class QueueGuardError extends MessageRejectedError {
  /**
   * @param guard - The guard's class name.
   * @param contextType - What `context.getType()` returned: `redis-ack-queue`.
   * @param detail - The guard's error, as text (its name and first line; never the payload).
   * @param options - `cause`: the error the guard threw.
   */
  constructor(
    readonly guard: string,
    readonly contextType: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES.guardThrew(guard, contextType, detail), options);
  }
}
