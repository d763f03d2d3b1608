import type { Redis } from 'ioredis';
import { RedisAckQueueService, type RedisAckQueueOptions } from '../../lib';
import { RedisServer, type RedisServerOptions } from './redis-server';

let topicCounter = 0;

/** A fresh topic name per test, so tests never see each other's messages. */
export function uniqueTopic(name = 'topic'): string {
  return `${name}.${process.pid}.${++topicCounter}`;
}

/**
 * Starts one private redis-server for a test file and hands out services bound to it;
 * everything is closed and removed after the file.
 */
export function useRedis(serverOptions: RedisServerOptions = {}) {
  const fixture = {
    server: undefined as unknown as RedisServer,
    /** A plain client for inspecting and damaging state. */
    redis: undefined as unknown as Redis,
    services: [] as RedisAckQueueService[],
    async service(options: RedisAckQueueOptions = {}): Promise<RedisAckQueueService> {
      const service = new RedisAckQueueService({ connection: fixture.server.url, ...options });
      fixture.services.push(service);
      await service.connect();
      return service;
    },
  };
  beforeAll(async () => {
    fixture.server = await RedisServer.start(serverOptions);
    fixture.redis = fixture.server.client();
  });
  afterAll(async () => {
    await Promise.all(fixture.services.map((service) => service.close(0)));
    await fixture.server?.stop();
  });
  return fixture;
}

/** Every key of a topic with its full content: equal snapshots mean nothing changed. */
export async function snapshotTopic(redis: Redis, topic: string, prefix = 'ackq'): Promise<Record<string, unknown>> {
  const keys = (await redis.keys(`{${prefix}:${topic}}*`)).sort();
  const snapshot: Record<string, unknown> = {};
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'list') snapshot[key] = await redis.lrange(key, 0, -1);
    else if (type === 'zset') snapshot[key] = await redis.zrange(key, '0', '-1', 'WITHSCORES');
    else if (type === 'hash') snapshot[key] = await redis.hgetall(key);
    else if (type === 'string') snapshot[key] = await redis.get(key);
    else snapshot[key] = type;
  }
  return snapshot;
}

/** Polls `check` until it returns a truthy value; for states that no event announces. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Server-side command counts, to prove how many round trips an operation costs. */
export async function commandCounts(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const counts: Record<string, number> = {};
  for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) counts[match[1]] = Number(match[2]);
  return counts;
}
