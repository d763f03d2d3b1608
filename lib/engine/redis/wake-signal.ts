import type { RedisClient } from './connection';
import { asError } from '../../errors/error-text';
import { DEFAULTS } from '../../common/redis-ack-queue.constants';
import { settleWithin } from '../../common/settle-within';

/** How an idle consumer waits for work; the poller depends on this, so a test can pass a fake. */
export interface WakeSignal {
  /**
   * Resolves when a push (or retry, release, requeue) wakes the consumer, after
   * `nextDueInMs` (-1: nothing is scheduled), after the idle bound, or when `stop` aborts.
   * Rejects when the wait itself failed (the connection is down).
   */
  wait(nextDueInMs: number, stop: AbortSignal): Promise<void>;
  close(): void;
  /** Called when Redis answers the wait (not when a timer ends it): health sees a live connection. */
  onAnswer?: () => void;
}

/**
 * A blocking pop of the topic's wake list on a connection of the consumer's own. A pop
 * that a due-time timer cut short stays outstanding and serves the next wait: one command
 * per wait, not two. A token it takes while no wait is under way (between a timer's end and
 * the next wait, while the consumer reserves) is kept as `woken`: the next wait returns at
 * once, so the push behind it is never left for the idle bound.
 */
export class BlockingWakeSignal implements WakeSignal {
  private pending: Promise<void> | undefined;
  private failure: unknown;
  private woken = false;
  onAnswer?: () => void;

  constructor(
    private readonly blocking: RedisClient,
    private readonly wakeKey: string,
  ) {}

  async wait(nextDueInMs: number, stop: AbortSignal): Promise<void> {
    if (this.woken) {
      // A wake-up came after the last wait ended: the caller reserves again first.
      this.woken = false;
      return;
    }
    if (!this.pending) {
      const pop: Promise<void> = this.blocking
        .blpop(this.wakeKey, DEFAULTS.idleWaitMs / 1000)
        .then(
          (reply) => {
            if (reply !== null) this.woken = true;
            this.onAnswer?.();
          },
          (error: unknown) => void (this.failure = error),
        )
        .finally(() => {
          if (this.pending === pop) this.pending = undefined;
        });
      this.pending = pop;
    }
    // A Node timer, not the pop's own timeout, wakes us for due messages: Redis checks
    // blocking timeouts only on its 100 ms cron tick. With nothing scheduled the pop's own
    // timeout ends the wait.
    const timerMs = nextDueInMs >= 0 ? Math.min(nextDueInMs + 1, DEFAULTS.idleWaitMs) : DEFAULTS.idleWaitMs * 2;
    await settleWithin(this.pending, timerMs, stop);
    // A token taken by now is this wait's: the caller reserves after it.
    this.woken = false;
    if (this.failure !== undefined) {
      const error = asError(this.failure);
      this.failure = undefined;
      throw error;
    }
  }

  close(): void {
    this.blocking.disconnect();
  }
}
