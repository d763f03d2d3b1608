import { RedisAckQueueError } from '../errors';
import { mapRedisError } from '../errors/map-redis-error';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { ConsumerReporting } from './failed-deliveries';
import { settleWithin } from '../common/settle-within';

/**
 * How a consumer rides out failures of Redis: the first failure of an outage is logged and
 * emitted (typed), every one backs off (200 ms doubling to 5 s), and the first success
 * after it logs the resume. One line per outage, not one per retry.
 */
export class FailurePause {
  private failures = 0;

  constructor(
    private readonly topic: string,
    private readonly report: ConsumerReporting,
  ) {}

  async after(failure: unknown, stop: AbortSignal): Promise<void> {
    const error = failure instanceof RedisAckQueueError ? failure : mapRedisError(failure, 'consume', this.topic);
    if (this.failures++ === 0) {
      this.report.logger.warn(MESSAGES.consumerError(this.topic, error.message));
      this.report.events.emit({ type: 'error', topic: this.topic, error });
    }
    await settleWithin(undefined, Math.min(100 * 2 ** this.failures, 5_000), stop);
  }

  recovered(): void {
    if (this.failures === 0) return;
    this.failures = 0;
    this.report.logger.log(MESSAGES.consumerResumed(this.topic));
  }
}
