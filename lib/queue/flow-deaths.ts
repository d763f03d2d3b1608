import type { DeadParent } from '../engine/consumer-engine';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { QueueLogger } from '../observability/queue-logger';
import type { QueueEvents } from './queue-events';

/**
 * Reports flow parents that went to the dead letters as `child-failed` (a child of theirs died or
 * was cancelled) as any dead letter is reported: logged (topic, id and which child failed, never
 * a payload), a `dead` event and a count in the history, in the process whose action they heard.
 * Such a parent was never delivered: its event says attempt 0, as its dead letter does.
 */
export function reportDeadParents(
  { events, logger }: { events: QueueEvents; logger: QueueLogger },
  parents: DeadParent[],
): void {
  for (const { topic, id, error } of parents) {
    logger.error(MESSAGES.parentDeadLettered(topic, id, error));
    events.tally.settled(topic, 'dead', undefined, undefined, 'child-failed');
    events.emit({ type: 'dead', topic, id, attempt: 0, reason: 'child-failed', error: new Error(error) });
  }
}
