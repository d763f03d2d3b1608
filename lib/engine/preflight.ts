import type { QueueLogger } from '../observability/queue-logger';
import { RedisConnectionError, UnsafeRedisConfigError } from '../errors';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { describeTarget, type RedisClient } from './connection';

/**
 * Checks what the queue's promises rest on: Redis 7+, no evicting memory policy (refused
 * unless allowEviction), and persistence (one warning when the AOF is off). Uses INFO
 * only, which a least-privilege ACL user may run, not CONFIG.
 */
export async function preflight(client: RedisClient, allowEviction: boolean, logger: QueueLogger): Promise<void> {
  const info = await client.info();
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim() ?? '';
  const target = describeTarget(client);
  const version = field('redis_version');
  if (Number(version.split('.')[0]) < 7) throw new RedisConnectionError(target, MESSAGES.oldRedis(target, version));
  const policy = field('maxmemory_policy');
  if (policy.startsWith('allkeys-') && !allowEviction) {
    throw new UnsafeRedisConfigError(target, 'maxmemory-policy', policy, MESSAGES.evictingPolicy(target, policy));
  }
  if (field('aof_enabled') === '0') logger.warn(MESSAGES.noPersistence(target));
}
