// Mirrors BullMQ's tests/rate_limiter.test.ts as scenarios of this queue's public API. BullMQ's
// limiter is a fixed window per worker option; here `rateLimit` is a fleet-wide sliding window on
// the Redis server clock (no burst at a window's edge), kept in Redis, and `context.rateLimited(ms)`
// is the dynamic limit. A delivery's start on the server clock is its message's `enqueuedAt` plus
// the `waitMs` of its `acked` event.
import type { MessageContext, RedisAckQueueService } from '../../../lib';
import { eventually, type TestClient, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { maxStartsInAnyInterval } from '../../support/start-times';
import { wellBefore } from '../../support/waits';

/** The server-clock start of each acked first delivery of `topic`, by id, with its payload. */
function serverStarts(services: RedisAckQueueService[], topic: string) {
  const enqueued = new Map<string, { enqueuedAt: number; payload: unknown }>();
  const starts = new Map<string, { at: number; payload: unknown }>();
  for (const service of services)
    service.events$.subscribe((event) => {
      const seen = event.type === 'acked' && event.topic === topic ? enqueued.get(event.id!) : undefined;
      if (seen) starts.set(event.id!, { at: seen.enqueuedAt + event.waitMs!, payload: seen.payload });
    });
  const handler = (payload: unknown, context: { id: string; enqueuedAt: number }) =>
    void enqueued.set(context.id, { enqueuedAt: context.enqueuedAt, payload });
  return { starts, handler };
}

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('BullMQ rate_limiter, as fleet-wide sliding limits', () => {
  const fx = useRedis();

  it('rate_limiter: "should obey the rate limit" (set globally) — at most max starts in any perMs across two services', async () => {
    const topic = uniqueTopic('rate');
    const services = [await fx.service(), await fx.service()];
    const { starts, handler } = serverStarts(services, topic);
    await services[0].pushMany(
      topic,
      Array.from({ length: 6 }, (_, n) => ({ payload: n })),
    );
    const limits = { rateLimit: { max: 2, perMs: 400 } };
    const consumers = services.map((service) => service.consume(topic, handler, { concurrency: 3, ...limits }));
    await eventually(() => starts.size === 6);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    const times = [...starts.values()].map(({ at }) => at);
    expect(maxStartsInAnyInterval(times, 400)).toBe(2);
  });

  it('rate_limiter: "processes jobs as max limiter from the beginning" — the first max start at once', async () => {
    const topic = uniqueTopic('rate');
    const queue = await fx.service();
    const { starts, handler } = serverStarts([queue], topic);
    await queue.pushMany(
      topic,
      Array.from({ length: 3 }, (_, n) => ({ payload: n })),
    );
    const consumer = queue.consume(topic, handler, { concurrency: 3, rateLimit: { max: 3, perMs: 60_000 } });
    await eventually(() => starts.size === 3);
    await consumer.close();
    const times = [...starts.values()].map(({ at }) => at);
    // None waited for the window: all three within one turn of the consumer, not a minute apart.
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(wellBefore(60_000));
  });

  it('rate_limiter: "should not put a job into the delayed queue when limit is hit" — it stays ready, no attempt counted; "should execute jobs without rate limit" once removed', async () => {
    const topic = uniqueTopic('rate');
    const queue = await fx.service();
    await queue.setLimits(topic, { rateLimit: { max: 1, perMs: 60_000 } });
    await queue.pushMany(topic, [{ payload: 'first' }, { payload: 'second' }]);
    const runs: { payload: unknown; attempt: number }[] = [];
    // Limits set by hand stay while a consumer without limits of its own runs.
    const consumer = queue.consume(topic, (payload, context) => void runs.push({ payload, attempt: context.attempt }));
    await eventually(() => runs.length === 1);
    await eventually(async () => (await queue.stats(topic)).leased === 0);
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, delayed: 0, leased: 0 });
    await queue.setLimits(topic, null);
    await eventually(() => runs.length === 2);
    await consumer.close();
    expect(runs).toEqual([
      { payload: 'first', attempt: 1 },
      { payload: 'second', attempt: 1 },
    ]);
  });

  it('rate_limiter: "should obey the rate limit" (when dynamic limit is used) — `rateLimited(ms)` holds the topic for every consumer without counting the attempt', async () => {
    const topic = uniqueTopic('rate');
    const [a, b] = [await fx.service(), await fx.service()];
    const { starts, handler } = serverStarts([a, b], topic);
    let heldFrom = 0;
    const attempts: number[] = [];
    const limited = async (payload: unknown, context: MessageContext) => {
      attempts.push(context.attempt);
      if (payload === 'first' && heldFrom === 0) {
        heldFrom = await serverNow(fx.redis);
        context.rateLimited(400);
      }
      handler(payload, context);
    };
    const consumers = [a.consume(topic, limited), b.consume(topic, limited)];
    // Pushed once the hold is in Redis (the deferral of the first), for either consumer to take.
    const deferred = new Promise<void>((resolve) =>
      [a, b].forEach((service) =>
        service.events$.subscribe((event) => event.type === 'deferred' && event.topic === topic && resolve()),
      ),
    );
    await a.push(topic, 'first');
    await deferred;
    await a.push(topic, 'second');
    await eventually(() => starts.size === 2);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(attempts).toEqual([1, 1, 1]);
    // The hold began after heldFrom: nothing of the topic started in either service before its end.
    const second = [...starts.values()].find(({ payload }) => payload === 'second')!;
    expect(second.at).toBeGreaterThanOrEqual(heldFrom + 400);
  });

  it('rate_limiter: "should obey the rate limit respecting priority" — under the limit, the higher level starts first', async () => {
    const topic = uniqueTopic('rate');
    const queue = await fx.service();
    await queue.pause(topic);
    await queue.pushMany(topic, [{ payload: 'low-1' }, { payload: 'low-2' }, { payload: 'high', priority: 9 }]);
    const order: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void order.push(payload), {
      rateLimit: { max: 1, perMs: 150 },
    });
    await queue.resume(topic);
    await eventually(() => order.length === 3);
    await consumer.close();
    expect(order).toEqual(['high', 'low-1', 'low-2']);
  });

  it('rate_limiter: "should quickly close a worker even with slow rate-limit" — a consumer waiting for the window closes at once', async () => {
    const topic = uniqueTopic('rate');
    const queue = await fx.service();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }]);
    let ran = 0;
    const consumer = queue.consume(topic, () => void ran++, { rateLimit: { max: 1, perMs: 60_000 } });
    await eventually(() => ran === 1);
    const closing = performance.now();
    await consumer.close();
    expect(performance.now() - closing).toBeLessThan(wellBefore(60_000));
    expect(ran).toBe(1);
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, leased: 0 });
  });
});
