import type { TopicLimitsStore } from '../engine/stores/topic-limits';
import { errorSummary } from '../errors/error-text';
import type { TopicLimits } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import { MESSAGES } from '../common/redis-ack-queue.messages';

/** How long a consumer waits before writing its limits again after Redis refused. */
const RETRY_MS = 1_000;

/**
 * Writes a consumer's limits to Redis before it takes anything, so that no consumer ever runs
 * without them: retried every second while Redis refuses, until written or `closed()`. A
 * consumer that declares none (`null`) withdraws the limits declared before it in code (not
 * those set by hand), so limits removed from the code stop applying.
 */
export async function writeLimitsFirst(
  store: TopicLimitsStore,
  topic: string,
  limits: TopicLimits | null,
  logger: QueueLogger,
  closed: () => boolean,
): Promise<void> {
  for (;;) {
    if (closed()) return;
    try {
      await store.set(topic, limits, limits ? 'code' : 'withdraw');
      return;
    } catch (error) {
      if (closed()) return;
      logger.warn(MESSAGES.limitsNotWritten(topic, errorSummary(error)));
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
