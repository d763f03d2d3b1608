import type { ConsumerEngine } from '../engine/consumer-engine';
import type { ReservedMessage } from '../interfaces';

/**
 * Hands the ends of flow children to their parents at once. A failure is left to the sweep
 * (every consumer of the topic passes on what an outbox still holds after a second).
 */
export async function handOver(engine: ConsumerEngine, topic: string, messages: ReservedMessage<unknown>[]) {
  if (messages.length === 0) return;
  try {
    await engine.flows.passEnded(topic, messages);
  } catch {
    // Left in the outbox: the sweep passes it on.
  }
}
