import { RedisAckQueueService } from '../service/redis-ack-queue.service';

/** The name of the queue that `forRoot()` / `forRootAsync()` register when given no `name`. */
export const DEFAULT_QUEUE = 'default';

/** Injection token of the default queue's module options. */
export const REDIS_ACK_QUEUE_OPTIONS = 'nestjs-redis-ack-queue:options';

/**
 * Module-private token of one registration (its name, options and service): every
 * registration provides it without exporting it, so each one's explorer gets its own, and
 * the explorers find all of them to refuse two registrations of one name.
 */
export const QUEUE_REGISTRATION = 'nestjs-redis-ack-queue:registration';

const isDefault = (name: string | undefined) => name === undefined || name === DEFAULT_QUEUE;

/**
 * The injection token of a queue's service: the class `RedisAckQueueService` for the default
 * queue (no name), a namespaced string for a named one. `@InjectQueue(name)` uses it.
 */
export function getQueueToken(name?: string): string | typeof RedisAckQueueService {
  return isDefault(name) ? RedisAckQueueService : `nestjs-redis-ack-queue:queue:${name}`;
}

/** The injection token of a queue's module options (`REDIS_ACK_QUEUE_OPTIONS` for the default queue). */
export function getQueueOptionsToken(name?: string): string {
  return isDefault(name) ? REDIS_ACK_QUEUE_OPTIONS : `nestjs-redis-ack-queue:options:${name}`;
}
