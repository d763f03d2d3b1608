import { MESSAGES } from '../redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** A @QueueHandler that cannot run: a second handler for a topic, a bad topic or option. */
export class InvalidQueueHandlerError extends RedisAckQueueError {
  readonly code = 'INVALID_HANDLER';
  constructor(readonly where: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }

  static duplicate(topic: string, first: string, second: string): InvalidQueueHandlerError {
    return new InvalidQueueHandlerError(second, MESSAGES.duplicateHandler(topic, first, second));
  }
}

/** An `@OnQueueEvent` listener that cannot be registered: an unknown event type, a bad topic or queue name. */
export class InvalidQueueListenerError extends RedisAckQueueError {
  readonly code = 'INVALID_LISTENER';
  constructor(readonly where: string, reason: string, options?: { cause?: unknown }) {
    super(MESSAGES.invalidListener(where, reason), options);
  }
}

/** The handler ran past its `timeoutMs`: the delivery counts as failed. */
export class HandlerTimeoutError extends RedisAckQueueError {
  readonly code = 'HANDLER_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(MESSAGES.handlerTimeout(timeoutMs));
  }
}

/** The lease of a running message expired (the message may already run elsewhere). */
export class LeaseLostError extends RedisAckQueueError {
  readonly code = 'LEASE_LOST';
  constructor(readonly topic: string, readonly id: string) {
    super(MESSAGES.leaseLost(topic, id));
  }
}

/** `waitUntilIdle` ran out of time while the topic still had work. */
export class IdleTimeoutError extends RedisAckQueueError {
  readonly code = 'IDLE_TIMEOUT';
  constructor(readonly topic: string, readonly timeoutMs: number) {
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
