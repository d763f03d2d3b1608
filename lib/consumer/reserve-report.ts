import type { ReserveResult } from '../engine/consumer-engine';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { ConsumerReporting } from './failed-deliveries';

/** Events of a reserve (built only while someone listens; expired messages counted too); unreadable bodies are logged too. */
export function reportReserve<T>(
  topic: string,
  { events, logger }: ConsumerReporting,
  { messages, buried, deadInRedis, expired }: ReserveResult<T>,
): void {
  for (let i = 0; i < deadInRedis; i++) events.tally.settled(topic, 'dead', undefined, undefined);
  events.expired(topic, expired);
  for (const { id, attempt } of buried) {
    logger.error(MESSAGES.deadLettered(topic, id, attempt, 'malformed', MESSAGES.malformedBody));
    events.emit({ type: 'dead', topic, id, attempt, reason: 'malformed' });
    events.tally.settled(topic, 'dead', undefined, undefined, 'malformed');
  }
  if (!events.observed) return;
  for (const { id, attempt } of messages) events.emit({ type: 'reserved', topic, id, attempt });
}
