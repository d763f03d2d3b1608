import type { ConsumerEngine } from '../engine/consumer-engine';
import type { ReservedMessage } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import { reportDeadParents } from '../queue/flow-deaths';
import type { QueueEvents } from '../queue/queue-events';

/**
 * Hands the ends of flow children to their parents at once, and reports the parents that went
 * to the dead letters. A failure is left to the sweep (every consumer of the topic passes on
 * what an outbox still holds after a second).
 */
export async function handOver(
  engine: ConsumerEngine,
  topic: string,
  messages: ReservedMessage<unknown>[],
  report: { events: QueueEvents; logger: QueueLogger },
) {
  if (messages.length === 0) return;
  try {
    reportDeadParents(report, await engine.flows.passEnded(topic, messages));
  } catch {
    // Left in the outbox: the sweep passes it on.
  }
}
