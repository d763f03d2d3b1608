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

  /** The provider that replaces the handler's class (a test's overrideProvider) lacks the method. */
  static replacedWithoutMethod(where: string, method: string): InvalidQueueHandlerError {
    return new InvalidQueueHandlerError(where, MESSAGES.replacedWithoutMethod(where, method));
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
