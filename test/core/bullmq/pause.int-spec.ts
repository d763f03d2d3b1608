// Mirrors BullMQ's tests/pause.test.ts as scenarios of this queue's public API. `pause(topic)` is a
// flag in Redis read by the atomic reserve, for every consumer in every process; it resolves at once
// (running handlers finish and ack afterwards), it holds until `resume`, and there is no local
// (per-worker) pause: a process stops its own consumers with `consumer.close()`.
import { expectLogs } from '../../support/capture-logs';
import { gate } from '../../support/gate';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { quietFor, untilConsumerBlocked } from '../../support/waits';

describe('BullMQ pause, as a fleet-wide pause kept in Redis', () => {
  const fx = useRedis();
  expectLogs(/failed/);

  it('pause: "should not process delayed jobs" — a delayed message that comes due while paused is not leased', async () => {
    const topic = uniqueTopic('pause');
    const queue = await fx.service();
    await queue.pause(topic);
    await queue.push(topic, 'x', { delayMs: 50 });
    const runs: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void runs.push(payload));
    await eventually(async () => (await queue.stats(topic)).ready === 1);
    await quietFor(200, 'a delivery while paused');
    await consumer.close();
    expect(runs).toEqual([]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, leased: 0, paused: true });
  });

  it('pause: "should pause a queue until resumed" — a consumer started while paused, in another process, takes nothing until resume', async () => {
    const topic = uniqueTopic('pause');
    const [admin, worker] = [await fx.service(), await fx.service()];
    await admin.pause(topic);
    await admin.pushMany(
      topic,
      [1, 2, 3].map((n) => ({ payload: n })),
    );
    const runs: unknown[] = [];
    const consumer = worker.consume(topic, (payload) => void runs.push(payload));
    await untilConsumerBlocked(fx.nodes(), topic);
    expect(runs).toEqual([]);
    await admin.resume(topic);
    await eventually(() => runs.length === 3);
    await consumer.close();
    expect(runs).toEqual([1, 2, 3]);
  });

  it('pause: "should wait until active jobs are finished before resolving pause" — here pause resolves at once; the running handler finishes and is acked after it', async () => {
    const topic = uniqueTopic('pause');
    const queue = await fx.service();
    const acked: string[] = [];
    queue.events$.subscribe((event) => event.type === 'acked' && event.topic === topic && acked.push(event.id!));
    const started = gate();
    const finish = gate();
    const consumer = queue.consume(topic, async () => {
      started.open();
      await finish.promise;
    });
    const { id } = await queue.push(topic, 'running');
    await queue.push(topic, 'waiting');
    await started.promise;
    await queue.pause(topic); // resolves while the handler still runs
    expect(consumer.running).toBe(1);
    finish.open();
    await eventually(() => acked.length === 1);
    await quietFor(200, 'a delivery while paused');
    expect(acked).toEqual([id]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, leased: 0, paused: true });
    await consumer.close();
  });

  it('pause: "gets the right response from isPaused" — `stats(topic).paused`, the same for every service', async () => {
    const topic = uniqueTopic('pause');
    const [a, b] = [await fx.service(), await fx.service()];
    expect((await b.stats(topic)).paused).toBe(false);
    await a.pause(topic);
    expect((await b.stats(topic)).paused).toBe(true);
    await b.resume(topic);
    expect((await a.stats(topic)).paused).toBe(false);
  });

  it('pause: "should pause and resume worker without error" — repeated pauses and resumes while working: each message handled once', async () => {
    const topic = uniqueTopic('pause');
    const queue = await fx.service();
    await queue.pushMany(
      topic,
      Array.from({ length: 30 }, (_, n) => ({ payload: n })),
    );
    const runs: number[] = [];
    const consumer = queue.consume(
      topic,
      async (payload: number) => {
        runs.push(payload);
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
      { concurrency: 2 },
    );
    for (let i = 0; i < 5; i++) {
      await queue.pause(topic);
      await queue.resume(topic);
    }
    await eventually(() => runs.length === 30);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect([...runs].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, n) => n));
  });

  it('pause: "moves job into paused queue" (when backoff is 0) — a failure retried while paused waits ready, its attempt counted once', async () => {
    const topic = uniqueTopic('pause');
    const queue = await fx.service();
    const attempts: number[] = [];
    const failing = gate();
    const consumer = queue.consume(
      topic,
      async (_payload, context) => {
        attempts.push(context.attempt);
        if (context.attempt === 1) {
          await failing.promise;
          throw new Error('failed once');
        }
      },
      { backoff: { type: 'fixed', delayMs: 0 } },
    );
    await queue.push(topic, 'x');
    await eventually(() => attempts.length === 1);
    await queue.pause(topic);
    failing.open();
    await eventually(async () => (await queue.stats(topic)).ready === 1);
    await quietFor(200, 'a retry while paused');
    expect(attempts).toEqual([1]);
    await queue.resume(topic);
    await eventually(() => attempts.length === 2);
    await consumer.close();
    expect(attempts).toEqual([1, 2]);
  });
});
