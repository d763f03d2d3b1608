import type { ConsumerEngine } from '../engine/consumer-engine';
import { MessageRejectedError, PayloadDecodeError, RateLimitedError, RetryLaterError } from '../errors';
import { asError, errorSummary } from '../errors/error-text';
import type { DeadLetterReason, ReservedMessage } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import type { QueueEvents } from '../queue/queue-events';
import type { ConsumerSettings } from '../queue/settings';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { DEFAULTS } from '../common/redis-ack-queue.constants';
import type { CancelSignals } from '../engine/redis/cancel-signals';
import type { DeliveryTimings } from './delivery-timings';
import { deferDelivery } from './retry-later';
import type { ValueCodecs } from '../queue/value-codecs';

/** Where a consumer reports what happens: the service's event stream and log. */
export interface ConsumerReporting {
  events: QueueEvents;
  logger: QueueLogger;
  /** Where it hears of its leased messages being cancelled (see CancelSignals). */
  cancels?: CancelSignals;
  /** The topics' codecs: what opens sealed messages and seals what handlers store (see ValueCodecs). */
  codecs?: ValueCodecs;
}

/**
 * Ends failed deliveries of one topic: a retry after the backoff while attempts remain, else
 * the dead letters; a MessageRejectedError goes to the dead letters at once (`rejected`); a
 * RetryLaterError defers it without an attempt (see retry-later.ts). A PayloadDecodeError (a
 * sealed message, see docs/codecs.md) goes to the dead letters at once (`undecodable`), or, when
 * this process lacks the codec, is deferred for a process that has it.
 * Each one is emitted and logged (topic, id, attempt and the error's first line, never the
 * payload).
 */
export class FailedDeliveries {
  constructor(
    private readonly engine: ConsumerEngine,
    private readonly topic: string,
    private readonly settings: ConsumerSettings,
    private readonly report: ConsumerReporting,
  ) {}

  /** Settles one failed delivery; false when its lease was lost meanwhile (nothing changed). */
  async settle(message: ReservedMessage<unknown>, error: unknown, timings: DeliveryTimings = {}): Promise<boolean> {
    const { id, attempt, maxAttempts } = message;
    if (error instanceof MessageRejectedError) {
      const [buried] = await this.engine.bury(this.topic, [message], 'rejected', error, maxAttempts);
      if (buried) this.dead(message, 'rejected', error, timings, error.reason);
      return buried;
    }
    if (error instanceof PayloadDecodeError && error.reason !== 'no-codec') {
      const [buried] = await this.engine.bury(this.topic, [message], 'undecodable', error, maxAttempts);
      if (buried) this.dead(message, 'undecodable', error, timings);
      return buried;
    }
    let delayMs: number;
    // Sealed by a codec this process lacks (a rolling deploy): it waits for a process that has it.
    const codecElsewhere = error instanceof PayloadDecodeError;
    if (error instanceof RetryLaterError || error instanceof RateLimitedError || codecElsewhere) {
      const wait = codecElsewhere ? DEFAULTS.noCodecRetryMs : error.delayMs;
      const deferred = await deferDelivery(
        this.engine,
        this.topic,
        this.settings,
        this.report,
        message,
        wait,
        timings,
        error instanceof RateLimitedError,
      );
      if (deferred !== 'over') return deferred;
      delayMs = wait;
    } else delayMs = this.settings.backoff(attempt, error);
    const result = await this.engine.nack(this.topic, message, { delayMs, maxAttempts, error });
    if (result === 'lost') return false;
    const { durationMs, waitMs } = timings;
    if (result === 'dead') this.dead(message, 'failed', error, timings);
    else {
      this.report.logger.warn(MESSAGES.retrying(this.topic, id, attempt, maxAttempts, delayMs, errorSummary(error)));
      this.report.events.tally.settled(this.topic, 'retried', durationMs, waitMs, undefined, undefined, message.group);
      this.report.events.emit({
        type: 'retried',
        topic: this.topic,
        id,
        attempt,
        error: asError(error),
        durationMs,
        waitMs,
      });
    }
    return true;
  }

  /** Reports a delivery that ended in the dead letters (a flow's child's parent heard it from the engine). */
  private dead(
    message: ReservedMessage<unknown>,
    reason: DeadLetterReason,
    error: unknown,
    { durationMs, waitMs }: DeliveryTimings,
    summary = errorSummary(error),
  ): void {
    const { id, attempt } = message;
    this.report.logger.error(MESSAGES.deadLettered(this.topic, id, attempt, reason, summary));
    this.report.events.tally.settled(this.topic, 'dead', durationMs, waitMs, reason, undefined, message.group);
    this.report.events.emit({
      type: 'dead',
      topic: this.topic,
      id,
      attempt,
      reason,
      error: asError(error),
      durationMs,
      waitMs,
    });
  }
}
