// Mirrors BullMQ's tests/delay.test.ts as scenarios of this queue's public API. Where BullMQ
// computes a delayed job's time on the producer's clock, this queue takes due times from the Redis
// server's clock (`TIME` in the push), so "never early" is checked on that clock: a delivery's start
// there is its message's `enqueuedAt` plus the `waitMs` of its `acked` event.
import type { RedisAckQueueService } from '../../../lib';
import { expectLogs } from '../../support/capture-logs';
import { eventually, type TestClient, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { untilConsumerBlocked, wellBefore } from '../../support/waits';
import { DEFAULTS } from '../../../lib/common/redis-ack-queue.constants';

/** Each acked first delivery of `topic`: its id, and its ms from push to the reserve that started it (server clock). */
function waits(services: RedisAckQueueService[], topic: string): Map<string, number> {
  const waited = new Map<string, number>();
  for (const service of services)
    service.events$.subscribe(
      (event) => event.type === 'acked' && event.topic === topic && waited.set(event.id!, event.waitMs!),
    );
  return waited;
}

describe('BullMQ delay, on the server clock', () => {
  const fx = useRedis();
  expectLogs(/failed/);

  it('delay: "should process a delayed job only after delayed time" — never before its due time on the Redis server clock', async () => {
    const topic = uniqueTopic('delay');
    const queue = await fx.service();
    const waited = waits([queue], topic);
    const consumer = queue.consume(topic, () => undefined);
    const { id } = await queue.push(topic, 'later', { delayMs: 300 });
    expect(await queue.get(topic, id)).toMatchObject({ state: 'delayed' });
    await eventually(() => waited.has(id));
    await consumer.close();
    expect(waited.get(id)).toBeGreaterThanOrEqual(300);
  });

  it('delay: "should add job directly into wait state" (delay 0) — and "…into prioritized state" with a priority: ready at once, by level', async () => {
    const topic = uniqueTopic('delay');
    const queue = await fx.service();
    const plain = await queue.push(topic, 'plain', { delayMs: 0 });
    const urgent = await queue.push(topic, 'urgent', { delayMs: 0, priority: 5 });
    expect(await queue.get(topic, plain.id)).toMatchObject({ state: 'ready' });
    expect(await queue.get(topic, urgent.id)).toMatchObject({ state: 'ready', priority: 5 });
    expect(await queue.stats(topic)).toMatchObject({ ready: 2, delayed: 0 });
    expect((await queue.reserve(topic, { count: 2 })).map((m) => m.payload)).toEqual(['urgent', 'plain']);
  });

  it('delay: "should keep moving delayed jobs to waiting" (when queue is paused) — due times go on while paused; nothing is leased until resume', async () => {
    const topic = uniqueTopic('delay');
    const queue = await fx.service();
    await queue.pause(topic);
    const { id } = await queue.push(topic, 'x', { delayMs: 100 });
    const ran: string[] = [];
    const consumer = queue.consume(topic, (_payload, context) => void ran.push(context.id));
    await eventually(async () => (await queue.stats(topic)).ready === 1);
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, delayed: 0, leased: 0, paused: true });
    expect(ran).toEqual([]);
    await queue.resume(topic);
    await eventually(() => ran.length === 1);
    await consumer.close();
    expect(ran).toEqual([id]);
  });

  it('delay: "should process a delayed job added after an initial long delayed job" — an idle consumer waiting for a far due time wakes for a nearer one', async () => {
    const topic = uniqueTopic('delay');
    const queue = await fx.service();
    const waited = waits([queue], topic);
    await queue.push(topic, 'far', { delayMs: 60_000 });
    const consumer = queue.consume(topic, () => undefined);
    await untilConsumerBlocked(fx.nodes(), topic);
    const near = await queue.push(topic, 'near', { delayMs: 200 });
    await eventually(() => waited.has(near.id));
    await consumer.close();
    // Not before its own due time, and woken for it: not at the end of the idle wait, nor the far one's.
    expect(waited.get(near.id)).toBeGreaterThanOrEqual(200);
    expect(waited.get(near.id)! - 200).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));
    expect(await queue.stats(topic)).toMatchObject({ delayed: 1 });
  });

  it('delay: "should process delayed jobs in correct order respecting delay" — and "…with exact same timestamps in correct order (FIFO)"', async () => {
    const topic = uniqueTopic('delay');
    const queue = await fx.service();
    const sameTime = (await serverNow(fx.redis)) + 250;
    // One call: one server time, so the due order is the delays' order however slow the machine.
    await queue.pushMany(topic, [
      { payload: 'c', delayMs: 300 },
      { payload: 'a', delayMs: 100 },
      { payload: 'b', delayMs: 200 },
      ...['same-1', 'same-2', 'same-3'].map((payload) => ({ payload, availableAt: sameTime })),
    ]);
    const order: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void order.push(payload));
    await eventually(() => order.length === 6);
    await consumer.close();
    // Where the equal due time falls among the delays depends on the push's time: each order is checked on its own.
    expect(order.filter((payload) => ['a', 'b', 'c'].includes(payload as string))).toEqual(['a', 'b', 'c']);
    expect(order.filter((payload) => String(payload).startsWith('same'))).toEqual(['same-1', 'same-2', 'same-3']);
  });

  it('delay: "should process delayed jobs with several workers respecting delay" — no worker of any service starts one early', async () => {
    const topic = uniqueTopic('delay');
    const services = [await fx.service(), await fx.service(), await fx.service()];
    const waited = waits(services, topic);
    const delays = [50, 100, 150, 200, 250, 300];
    const pushed = await services[0].pushMany(
      topic,
      delays.map((delayMs) => ({ payload: delayMs, delayMs })),
    );
    const consumers = services.map((service) => service.consume(topic, () => undefined, { concurrency: 2 }));
    await eventually(() => waited.size === delays.length);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    pushed.forEach(({ id }, i) => expect(waited.get(id)).toBeGreaterThanOrEqual(delays[i]));
  });

  it('delay: "processes jobs without getting stuck" (when failed jobs are retried and moved to delayed) — retries wait their backoff and every message ends', async () => {
    const topic = uniqueTopic('delay');
    const queue = await fx.service();
    await queue.pushMany(
      topic,
      [1, 2, 3, 4].map((n) => ({ payload: n })),
    );
    const attempts = new Map<unknown, number[]>();
    const consumer = queue.consume(
      topic,
      (payload, context) => {
        attempts.set(payload, [...(attempts.get(payload) ?? []), context.attempt]);
        if (context.attempt === 1) throw new Error('failed once');
      },
      { concurrency: 2, backoff: { type: 'fixed', delayMs: 100 } },
    );
    await eventually(() => [...attempts.values()].filter((seen) => seen.length === 2).length === 4);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect([...attempts.values()]).toEqual([
      [1, 2],
      [1, 2],
      [1, 2],
      [1, 2],
    ]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
  });
});

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
