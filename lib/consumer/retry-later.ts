import type { ConsumerEngine } from '../engine/consumer-engine';
import type { ReservedMessage } from '../interfaces';
import type { ConsumerSettings } from '../queue/settings';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { DeliveryTimings } from './delivery-timings';
import type { QueueLogger } from '../observability/queue-logger';
import type { QueueEvents } from '../queue/queue-events';

/**
 * Ends a delivery whose handler asked to retry later: back to delayed for `delayMs` without
 * counting the attempt, reported as `deferred` (logged at the `log` level, never the payload).
 * Returns true deferred, false lease lost, 'over' when the message used up `maxDeferrals`
 * (nothing changed: the caller nacks it, so the deferral counts as an attempt).
 */
export async function deferDelivery(
  engine: ConsumerEngine,
  topic: string,
  settings: ConsumerSettings,
  report: { events: QueueEvents; logger: QueueLogger },
  message: ReservedMessage<unknown>,
  delayMs: number,
  { durationMs }: DeliveryTimings,
  hold = false,
): Promise<boolean | 'over'> {
  const { id, attempt } = message;
  const result = await engine.defer(topic, message, delayMs, settings.maxDeferrals, hold);
  if (result === 'lost') return false;
  if (result === 'over') {
    report.logger.warn(MESSAGES.overDeferred(topic, id, settings.maxDeferrals));
    return 'over';
  }
  report.logger.log(MESSAGES.deferred(topic, id, attempt, delayMs));
  report.events.emit({ type: 'deferred', topic, id, attempt, delayMs, durationMs });
  return true;
}
