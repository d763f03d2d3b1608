import { RedisUnavailableError } from '../../errors';
import { LIMITS } from '../../common/redis-ack-queue.constants';
import { MESSAGES } from '../../common/redis-ack-queue.messages';

/**
 * Bounds the Redis work of one public call: it rejects with RedisUnavailableError naming
 * `operation` and `boundBy` (the option that set `ms`) once `ms` pass without an answer. It works whatever the client (the queue's
 * own, a user's, a Cluster) and whatever the outage (refused connections, a server frozen
 * with its socket open), where ioredis alone would retry for seconds or wait for good. The
 * command is not withdrawn: ioredis may still send it when Redis returns, and the error
 * says so. The timer never outlives the call; a late failure of `work` is handled here.
 */
export function withinBound<T>(
  work: Promise<T>,
  ms: number,
  operation: string,
  topic?: string,
  boundBy = 'the commandTimeoutMs',
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    const bound = Math.min(ms, LIMITS.maxTimerMs);
    const reason = MESSAGES.noAnswer(bound, boundBy);
    timer = setTimeout(() => reject(new RedisUnavailableError(operation, topic, reason)), bound);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
