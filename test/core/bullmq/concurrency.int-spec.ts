// Mirrors BullMQ's tests/concurrency.test.ts (its global concurrency) as scenarios of this queue's
// public API: `globalConcurrency` is kept in Redis (`setLimits`, or a handler's options) and
// enforced inside the atomic reserve, so it holds every consumer of every process; a message over
// it is not taken, and the ack (or cancel) that frees a slot wakes the consumers.
import type { RedisAckQueueService } from '../../../lib';
import { expectLogs } from '../../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';

/** Handlers that hold each message until `release()`, counting how many run at once. */
class Running {
  now = 0;
  most = 0;
  done = 0;
  private waiting: (() => void)[] = [];
  readonly handler = async (): Promise<void> => {
    this.most = Math.max(this.most, ++this.now);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.now--;
    this.done++;
  };
  /** Lets every handler that waits finish. */
  release(): void {
    this.waiting.splice(0).forEach((resolve) => resolve());
  }
  /** Lets handlers finish as they come until `count` are done. */
  async drain(count: number): Promise<void> {
    await eventually(() => {
      this.release();
      return this.done === count;
    });
  }
}

async function pushN(queue: RedisAckQueueService, topic: string, n: number): Promise<void> {
  await queue.pushMany(
    topic,
    Array.from({ length: n }, (_, i) => ({ payload: i })),
  );
}

describe('BullMQ concurrency, as the fleet-wide globalConcurrency', () => {
  const fx = useRedis();
  expectLogs(/failed/);

  it('concurrency: "should run max concurrency for jobs added" — at most globalConcurrency run at once across services, each allowing more', async () => {
    const topic = uniqueTopic('conc');
    const [a, b] = [await fx.service(), await fx.service()];
    await a.setLimits(topic, { globalConcurrency: 2 });
    await pushN(a, topic, 8);
    const running = new Running();
    const consumers = [
      a.consume(topic, running.handler, { concurrency: 4 }),
      b.consume(topic, running.handler, { concurrency: 4 }),
    ];
    await eventually(() => running.now === 2);
    expect(await a.stats(topic)).toMatchObject({ leased: 2, ready: 6 });
    await running.drain(8);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(running.most).toBe(2);
  });

  it('concurrency: "should run max concurrency for jobs added" (after removeGlobalConcurrency) — `setLimits(topic, null)` leaves each consumer its own concurrency', async () => {
    const topic = uniqueTopic('conc');
    const queue = await fx.service();
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await queue.setLimits(topic, null);
    expect(await queue.limits(topic)).toEqual({});
    await pushN(queue, topic, 6);
    const running = new Running();
    const consumer = queue.consume(topic, running.handler, { concurrency: 3 });
    await eventually(() => running.now === 3);
    await running.drain(6);
    await consumer.close();
    expect(running.most).toBe(3);
  });

  it('concurrency: "should run max concurrency for jobs added respecting global dynamic limit" — a limit raised at run time applies to running consumers', async () => {
    const topic = uniqueTopic('conc');
    const queue = await fx.service();
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await pushN(queue, topic, 6);
    const running = new Running();
    const consumer = queue.consume(topic, running.handler, { concurrency: 4 });
    await eventually(() => running.now === 1);
    await queue.setLimits(topic, { globalConcurrency: 3 });
    // The raise alone lets two more start: no ack needed to wake the consumer.
    await eventually(() => running.now === 3);
    await running.drain(6);
    await consumer.close();
    expect(running.most).toBe(3);
  });

  it('concurrency: "processes jobs without getting stuck" (when jobs use backoff strategy) — a message waiting out its backoff holds no slot', async () => {
    const topic = uniqueTopic('conc');
    const queue = await fx.service();
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await pushN(queue, topic, 3);
    const runs: { payload: unknown; attempt: number }[] = [];
    const consumer = queue.consume(
      topic,
      (payload, context) => {
        runs.push({ payload, attempt: context.attempt });
        if (context.attempt === 1) throw new Error('failed once');
      },
      { concurrency: 2, backoff: { type: 'fixed', delayMs: 1_000 } },
    );
    await eventually(() => runs.length === 6);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    // Every first attempt ran before any retry came due: the retries did not block the slot.
    expect(runs.slice(0, 3).map(({ attempt }) => attempt)).toEqual([1, 1, 1]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
  });

  it('concurrency: "does not get stuck in max state" (when removing a job in active state) — cancelling a leased message frees its slot at once', async () => {
    const topic = uniqueTopic('conc');
    const queue = await fx.service();
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await pushN(queue, topic, 3);
    const [held] = await queue.reserve(topic, { leaseMs: 60_000 });
    expect(await queue.reserve(topic)).toEqual([]);
    expect(await queue.cancel(topic, held.id)).toBe('leased');
    expect(await queue.reserve(topic)).toHaveLength(1);
  });

  it('concurrency: "should automatically process stalled jobs respecting group order" — a stalled lease keeps its slot until its deadline, then runs again first', async () => {
    const topic = uniqueTopic('conc');
    const queue = await fx.service();
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await pushN(queue, topic, 3);
    const [stalled] = await queue.reserve(topic, { leaseMs: 200 });
    const runs: { payload: unknown; attempt: number }[] = [];
    const consumer = queue.consume(topic, (payload, context) => void runs.push({ payload, attempt: context.attempt }));
    await eventually(() => runs.length === 3);
    await consumer.close();
    // An expired lease goes back to the head of ready: it runs before the others.
    expect(runs).toEqual([
      { payload: stalled.payload, attempt: 2 },
      { payload: 1, attempt: 1 },
      { payload: 2, attempt: 1 },
    ]);
  });
});
