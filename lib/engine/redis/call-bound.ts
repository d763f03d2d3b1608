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
 *
 * An answer that reached the socket while the process was busy (a loaded machine, a long
 * synchronous task) still wins: Node runs due timers before it reads sockets, so the expiry
 * waits for the turn's reads (setImmediate) before it rejects.
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
    const expire = () => reject(new RedisUnavailableError(operation, topic, reason));
    timer = setTimeout(() => setImmediate(expire), bound);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
