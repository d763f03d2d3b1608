import { BOUNDS } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { InvalidOptionError } from './input.errors';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * Thrown by a handler (or by `context.retryLater`) to have its message delivered again after
 * `delayMs` without counting the attempt: a dependency is not ready, a rate limit says wait.
 * Past the consumer's `maxDeferrals` for one message, a deferral counts as an attempt (a
 * retry, or the dead letters after the last one), so nothing is deferred forever.
 */
export class RetryLaterError extends RedisAckQueueError {
  /** Always `RETRY_LATER`. */
  readonly code = 'RETRY_LATER';
  /**
   * @param delayMs - Wait before the next delivery (ms, a whole number from 0 to 2^31-1).
   * @throws {InvalidOptionError} when `delayMs` is out of that range.
   */
  constructor(readonly delayMs: number) {
    assertDelay(delayMs);
    super(MESSAGES.retryLater(delayMs));
  }
}

/**
 * Thrown by a handler (or by `context.rateLimited`) when a downstream service refused for its
 * own rate limit (an HTTP 429): the message is delivered again after `delayMs` without counting
 * the attempt (as `RetryLaterError`, within `maxDeferrals`), and its ordered group, or the topic
 * for a message without a group, starts nothing more until then, for every consumer.
 */
export class RateLimitedError extends RedisAckQueueError {
  /** Always `RATE_LIMITED`. */
  readonly code = 'RATE_LIMITED';
  /**
   * @param delayMs - How long the group or topic is held (ms, a whole number from 0 to 2^31-1).
   * @throws {InvalidOptionError} when `delayMs` is out of that range.
   */
  constructor(readonly delayMs: number) {
    assertDelay(delayMs);
    super(MESSAGES.rateLimited(delayMs));
  }
}

function assertDelay(delayMs: number): void {
  const [min, max] = BOUNDS.retryLaterMs;
  if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < min || delayMs > max) {
    throw new InvalidOptionError('delayMs', delayMs, `a whole number of milliseconds from ${min} to ${max}`);
  }
}
