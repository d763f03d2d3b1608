import { type Observable, Subject } from 'rxjs';
import { IdleTimeoutError } from '../errors';
import type { QueueStats, RedisAckQueueEvent, RedisAckQueueOnExpire } from '../interfaces';
import { DeliveryTallies } from './delivery-tally';

/**
 * The event stream of one service, shared by its parts and its consumers. Events are
 * made only while someone listens: a consumer checks `observed` before building one on
 * its hot path. Beside it, `tally`: the counts that the history (and metrics) record, told
 * with plain numbers wherever the events of pushes, settled deliveries and cancels are made.
 */
export class QueueEvents {
  private readonly subject = new Subject<RedisAckQueueEvent>();
  readonly stream$: Observable<RedisAckQueueEvent> = this.subject.asObservable();
  readonly tally = new DeliveryTallies();

  get observed(): boolean {
    return this.subject.observed;
  }

  emit(event: RedisAckQueueEvent): void {
    if (this.subject.observed) this.subject.next(event);
  }

  /**
   * Messages a reserve ended because their start-by deadline passed: an `expired` event each, the
   * tally's count (a dead letter counts as dead too, with reason `expired`).
   */
  expired(topic: string, ended: readonly { id: string; onExpire: RedisAckQueueOnExpire }[] = []): void {
    for (const { id, onExpire } of ended) {
      this.tally.expired(topic, onExpire);
      const dead = onExpire === 'dead-letter';
      if (dead) this.tally.settled(topic, 'dead', undefined, undefined, 'expired');
      this.emit({ type: 'expired', topic, id, onExpire, ...(dead && { reason: 'expired' as const }) });
    }
  }

  complete(): void {
    this.subject.complete();
  }

  /**
   * Resolves when `stats` count nothing ready, delayed or leased; looks again on each event of
   * `topic` (at least every 50 ms). IdleTimeoutError after `timeoutMs`.
   */
  async untilIdle(topic: string, timeoutMs: number, stats: () => Promise<QueueStats>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { ready, delayed, leased } = await stats();
      if (ready + delayed + leased === 0) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new IdleTimeoutError(topic, timeoutMs);
      await this.nextOf(topic, Math.min(left, 50));
    }
  }

  /** Resolves on the next event of `topic`, or after `ms`. */
  nextOf(topic: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const subscription = this.subject.subscribe((event) => event.topic === topic && done());
      function done() {
        clearTimeout(timer);
        subscription.unsubscribe();
        resolve();
      }
    });
  }
}
