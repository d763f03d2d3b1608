import { RedisAckQueueService, UnsafeRedisConfigError } from '../../lib';
import { captureLogs } from '../support/capture-logs';
import { RedisServer } from '../../support/redis-processes/redis-server';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('preflight checks at startup', () => {
  const fx = useRedis();

  // CONFIG is per server, and a cluster client's startup check asks any master: set it on every node.
  const setPolicy = (policy: string) =>
    Promise.all(fx.nodes().map((node) => node.config('SET', 'maxmemory-policy', policy)));

  it('refuses an evicting maxmemory-policy unless allowed, and explains why', async () => {
    await setPolicy('allkeys-lru');
    try {
      const refused = new RedisAckQueueService({ connection: fx.connection });
      const failure = refused.connect();
      await expect(failure).rejects.toBeInstanceOf(UnsafeRedisConfigError);
      await expect(failure).rejects.toThrow(
        /maxmemory-policy allkeys-lru: it may evict queue keys.*noeviction.*allowEviction/,
      );
      await refused.close(0);
      await expect(fx.service({ allowEviction: true })).resolves.toBeDefined();
    } finally {
      await setPolicy('noeviction');
    }
    await setPolicy('volatile-lru');
    await expect(fx.service()).resolves.toBeDefined();
    await setPolicy('noeviction');
  });

  it('warns once per process and server, clearly, when the AOF is off, and not when it is on', async () => {
    const logs = captureLogs();
    // A server of its own: no earlier test of this file connected to it.
    const volatile = await RedisServer.start();
    try {
      // Three connections to one server (as a hybrid app's queue, transport server and client): one warning.
      const queues = [0, 1, 2].map(() => new RedisAckQueueService({ connection: volatile.url }));
      await Promise.all(queues.map((queue) => queue.connect()));
      expect(logs.lines.filter((l) => l.startsWith('warn') && /appendonly off/.test(l))).toHaveLength(1);
      await Promise.all(queues.map((queue) => queue.close(0)));
      const durable = await RedisServer.start({ appendonly: true });
      try {
        logs.lines.length = 0;
        const queue = new RedisAckQueueService({ connection: durable.url });
        await queue.connect();
        expect(logs.lines.filter((l) => /appendonly/.test(l))).toEqual([]);
        await queue.close(0);
      } finally {
        await durable.stop();
      }
    } finally {
      logs.restore();
      await volatile.stop();
    }
  });
});

describe('dead letters are bounded', () => {
  const fx = useRedis();

  it('keeps at most maxCount, deleting the oldest with their bodies', async () => {
    const queue = await fx.service({ maxAttempts: 1, deadLetters: { maxCount: 3 } });
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ id: `d${i}`, payload: i })),
    );
    for (const message of await queue.reserve(topic, { count: 5 }))
      await queue.nack(message, { error: new Error('x') });
    expect((await queue.deadLetters(topic)).map((d) => d.id)).toEqual(['d2', 'd3', 'd4']);
    expect(await fx.redis.hkeys(`{ackq:${topic}}:messages`)).toEqual(expect.arrayContaining(['d2', 'd3', 'd4']));
    expect(await fx.redis.hlen(`{ackq:${topic}}:messages`)).toBe(3);
    expect(await fx.redis.hlen(`{ackq:${topic}}:dead-info`)).toBe(3);
  });

  it('deletes dead letters older than maxAgeMs when new ones arrive', async () => {
    const queue = await fx.service({ maxAttempts: 1, deadLetters: { maxAgeMs: 200 } });
    const topic = uniqueTopic();
    await queue.push(topic, 'old', { id: 'old' });
    await queue.nack((await queue.reserve(topic))[0]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await queue.push(topic, 'new', { id: 'new' });
    await queue.nack((await queue.reserve(topic))[0]);
    expect((await queue.deadLetters(topic)).map((d) => d.id)).toEqual(['new']);
  });
});
