import type { ConsumerEngine } from '../engine/consumer-engine';
import { asError, errorSummary } from '../errors/error-text';
import type { ReservedMessage } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import type { QueueEvents } from '../queue/queue-events';
import type { ConsumerSettings } from '../queue/settings';
import { MESSAGES } from '../redis-ack-queue.messages';

/** Where a consumer reports what happens: the service's event stream and log. */
export interface ConsumerReporting {
  events: QueueEvents;
  logger: QueueLogger;
}

/**
 * Ends failed deliveries of one topic: a retry after the backoff while attempts remain, else
 * the dead letters; each one emitted and logged (topic, id, attempt and the error's first
 * line, never the payload).
 */
export class FailedDeliveries {
  constructor(
    private readonly engine: ConsumerEngine,
    private readonly topic: string,
    private readonly settings: ConsumerSettings,
    private readonly report: ConsumerReporting,
  ) {}

  /** Settles one failed delivery; false when its lease was lost meanwhile (nothing changed). */
  async settle(message: ReservedMessage<unknown>, error: unknown): Promise<boolean> {
    const { topic } = this;
    const { id, attempt, maxAttempts } = message;
    const delayMs = this.settings.backoff(attempt, error);
    const result = await this.engine.nack(topic, message, { delayMs, maxAttempts, error });
    if (result === 'lost') return false;
    if (result === 'retry') this.report.logger.warn(MESSAGES.retrying(topic, id, attempt, maxAttempts, delayMs, errorSummary(error)));
    else this.report.logger.error(MESSAGES.deadLettered(topic, id, attempt, 'failed', errorSummary(error)));
    this.report.events.emit({ type: result === 'retry' ? 'retried' : 'dead', topic, id, attempt, error: asError(error) });
    return true;
  }
}
