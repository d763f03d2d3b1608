import type { QueueLogger } from '../../observability/queue-logger';
import { RedisConnectionError, UnsafeRedisConfigError } from '../../errors';
import { MESSAGES } from '../../common/redis-ack-queue.messages';
import { describeTarget, type RedisClient } from './connection';

/**
 * Checks what the queue's promises rest on: Redis 7+ (or Valkey, which reports the Redis
 * version it is compatible with, 7.2 for Valkey 8), no evicting memory policy (refused unless
 * allowEviction), and persistence (one warning per process and target when the AOF is off). Uses INFO only, which a
 * least-privilege ACL user may run, not CONFIG. Its messages name the server it found.
 */
export async function preflight(client: RedisClient, allowEviction: boolean, logger: QueueLogger): Promise<void> {
  const info = await client.info();
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim() ?? '';
  const target = describeTarget(client);
  const valkey = field('server_name') === 'valkey';
  const server = valkey ? 'Valkey' : 'Redis';
  const version = field('redis_version');
  if (Number(version.split('.')[0]) < 7) {
    const found = `${server} ${valkey ? field('valkey_version') : version}`;
    throw new RedisConnectionError(target, MESSAGES.oldRedis(target, found));
  }
  const policy = field('maxmemory_policy');
  if (policy.startsWith('allkeys-') && !allowEviction) {
    throw new UnsafeRedisConfigError(
      target,
      'maxmemory-policy',
      policy,
      MESSAGES.evictingPolicy(server, target, policy),
    );
  }
  if (field('aof_enabled') === '0' && !warnedNoPersistence.has(target)) {
    warnedNoPersistence.add(target);
    logger.warn(MESSAGES.noPersistence(server, target));
  }
}

/**
 * The targets whose AOF was reported off already: the warning is about the server, so it is said
 * once per process and target, however many connections the process opens (a hybrid app with a
 * queue, a transport server and a client opens three).
 */
const warnedNoPersistence = new Set<string>();
