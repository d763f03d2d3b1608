import type { QueueEngine } from '../../lib/engine/queue-engine';
import {
  InvalidStoredValueError,
  MessageCancelledError,
  type MessageContext,
  type RedisAckQueueEvent,
  type RedisAckQueueService,
} from '../../lib';
import { untilCancelListened } from '../support/cancel-listeners';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { gate } from '../support/gate';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { wellBefore } from '../support/waits';

function record(queue: RedisAckQueueService, topic: string): RedisAckQueueEvent[] {
  const events: RedisAckQueueEvent[] = [];
  queue.events$.subscribe((event) => event.topic === topic && events.push(event));
  return events;
}

describe('job control in handlers: cancel, progress, completed results', () => {
  const fx = useRedis();

  it.each([1, 3])(
    'aborts a running handler in another process within 100 ms of a cancel, and counts no outcome (%i partition(s))',
    async (partitions) => {
      const topic = uniqueTopic('cancel');
      const options = { topics: { [topic]: { partitions } } };
      const worker = await fx.service(options);
      const producer = await fx.service(options);
      const events = record(worker, topic);
      const started = gate<MessageContext>();
      const aborted = gate<{ at: number; reason: unknown }>();
      const consumer = worker.consume(
        topic,
        (_payload, context) => {
          started.open(context);
          return new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => {
              aborted.open({ at: performance.now(), reason: context.signal.reason });
              reject(context.signal.reason as Error);
            }),
          );
        },
        { leaseMs: 60_000 },
      );
      await producer.push(topic, 'long job', { id: 'job-1' });
      const context = await started.promise;
      await untilCancelListened(fx.nodes(), topic, partitions);

      expect(await producer.cancel(topic, 'job-1')).toBe('leased');
      const cancelledAt = performance.now();
      const { at, reason } = await aborted.promise;
      // At once, not at the next heartbeat (every third of the 60 s lease).
      expect(at - cancelledAt).toBeLessThan(wellBefore(60_000 / 3));
      expect(reason).toBeInstanceOf(MessageCancelledError);
      expect(context.signal.aborted).toBe(true);

      await eventually(() => consumer.running === 0);
      await consumer.close();
      expect(await producer.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
      expect(await producer.get(topic, 'job-1')).toBeNull();
      // Neither a success nor a failure: no ack, no retry, no dead letter, no lost lease.
      expect(events.map((e) => e.type)).toEqual(['reserved']);
      expect(loggedLines(/job-1/)).toEqual([]);
    },
  );

  it('ignores the outcome of a cancelled handler that resolves anyway', async () => {
    const worker = await fx.service();
    const topic = uniqueTopic();
    const events = record(worker, topic);
    const started = gate<MessageContext>();
    const finish = gate();
    const consumer = worker.consume(
      topic,
      async (_payload, context) => {
        started.open(context);
        await finish.promise;
        return 'done';
      },
      { leaseMs: 60_000 },
    );
    await worker.push(topic, 'x', { id: 'a' });
    const context = await started.promise;
    await untilCancelListened(fx.nodes(), topic);
    expect(await worker.cancel(topic, 'a')).toBe('leased');
    await eventually(() => context.signal.aborted);
    finish.open();
    await eventually(() => consumer.running === 0);
    await consumer.close();
    expect(events.map((e) => e.type)).toEqual(['pushed', 'reserved', 'cancelled']);
  });

  it('writes a chatty handler’s progress a handful of times, the latest value last, fenced by the lease', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const events = record(queue, topic);
    const finish = gate();
    const reported = gate();
    const consumer = queue.consume(
      topic,
      async (_payload, context) => {
        for (let i = 1; i <= 10_000; i++) context.progress({ done: i, of: 10_000 });
        expect(() => context.progress('x'.repeat(5_000))).toThrow(InvalidStoredValueError);
        expect(() => context.progress({ f: () => 1 })).toThrow(/not JSON-serializable/);
        reported.open();
        await finish.promise;
      },
      { leaseMs: 60_000 },
    );
    await queue.push(topic, 'x', { id: 'p1' });
    await reported.promise;
    await eventually(async () => ((await queue.get(topic, 'p1'))?.progress as { done: number })?.done === 10_000);
    expect(await queue.get(topic, 'p1')).toMatchObject({ state: 'leased', progress: { done: 10_000, of: 10_000 } });
    const writes = events.filter((e) => e.type === 'progress');
    expect(writes.length).toBeGreaterThanOrEqual(1);
    expect(writes.length).toBeLessThanOrEqual(3);
    expect(writes[0]).toEqual({ type: 'progress', topic, id: 'p1', attempt: 1 });

    // A stale token writes nothing.
    const engine = (queue as unknown as { core: { engine: QueueEngine } }).core.engine;
    expect(await engine.progress(topic, { id: 'p1', token: 'stale.1' }, '"stale"')).toBe(false);
    expect((await queue.get(topic, 'p1'))?.progress).toEqual({ done: 10_000, of: 10_000 });
    finish.open();
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(await fx.redis.hlen(`{ackq:${topic}}:progress`)).toBe(0);
  });

  it('keeps completed messages with their results, bounded, their ids still taken', async () => {
    const topic = uniqueTopic('kept');
    const queue = await fx.service({ topics: { [topic]: { keepCompleted: { maxCount: 3 } } } });
    const consumer = queue.consume(topic, (payload: number) => ({ doubled: payload * 2 }));
    for (let n = 1; n <= 5; n++) {
      await queue.push(topic, n, { id: `k${n}` });
      await eventually(async () => (await queue.get(topic, `k${n}`))?.state === 'completed');
    }
    await consumer.close();
    const kept = await queue.list(topic, 'completed');
    expect(kept.map((m) => m.id)).toEqual(['k5', 'k4', 'k3']);
    expect(kept[0]).toEqual({
      id: 'k5',
      state: 'completed',
      payload: 5,
      headers: {},
      attempt: 1,
      maxAttempts: 5,
      enqueuedAt: expect.any(Number) as unknown,
      completedAt: expect.any(Number) as unknown,
      durationMs: expect.any(Number) as unknown,
      result: { doubled: 10 },
    });
    expect(await queue.get(topic, 'k1')).toBeNull();
    // While kept, the id is taken: a push with it is a duplicate.
    expect(await queue.push(topic, 99, { id: 'k4' })).toEqual({ id: 'k4', duplicate: true });
    expect(await queue.push(topic, 99, { id: 'k1' })).toEqual({ id: 'k1', duplicate: false });
    expect(await queue.cancel(topic, 'k5')).toBe('completed');
    expect(await queue.stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('keeps the ack of a result it cannot store, without the result, and warns without the value', async () => {
    const topic = uniqueTopic('kept');
    const queue = await fx.service({ keepCompleted: true, maxPayloadBytes: 100 });
    expectLogs(/Message big of ".*" was acked and kept as completed without its result: its JSON is \d+ bytes/);
    expectLogs(/Message fn of ".*" was acked and kept as completed without its result: it is not JSON/);
    const consumer = queue.consume(topic, (payload: string) =>
      payload === 'big' ? 'secret-'.repeat(50) : { run: () => 1 },
    );
    await queue.pushMany(topic, [
      { id: 'big', payload: 'big' },
      { id: 'fn', payload: 'fn' },
    ]);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    for (const id of ['big', 'fn']) {
      const message = await queue.get(topic, id);
      expect(message).toMatchObject({ state: 'completed', attempt: 1 });
      expect(message).not.toHaveProperty('result');
    }
    expect(loggedLines(/secret/)).toEqual([]);
  });

  it('takes keepCompleted per topic over the service default, and a result given to ack', async () => {
    const plain = uniqueTopic('plain');
    const kept = uniqueTopic('kept');
    const queue = await fx.service({
      keepCompleted: { maxAgeMs: 60_000 },
      topics: { [plain]: { keepCompleted: false } },
    });
    for (const topic of [plain, kept]) {
      await queue.push(topic, 1, { id: 'a' });
      const [message] = await queue.reserve(topic);
      expect(await queue.ack(message, { total: 42 })).toBe(true);
      expect(await queue.ack(message, { total: 42 })).toBe(false);
    }
    expect(await queue.get(plain, 'a')).toBeNull();
    expect(await queue.get(kept, 'a')).toMatchObject({ state: 'completed', result: { total: 42 } });
    expect(await fx.redis.zcard(`{ackq:${kept}}:completed`)).toBe(1);
  });

  it('keeps completed records of a partitioned topic in each partition, listed newest first', async () => {
    const topic = uniqueTopic('kept-parts');
    const queue = await fx.service({ keepCompleted: true, topics: { [topic]: { partitions: 3 } } });
    const consumer = queue.consume(topic, (payload: number) => payload + 1);
    const ids = Array.from({ length: 9 }, (_, i) => `q${i}`);
    for (const [i, id] of ids.entries()) {
      await queue.push(topic, i, { id });
      await eventually(async () => (await queue.get(topic, id))?.state === 'completed');
    }
    await consumer.close();
    const page = await queue.list(topic, 'completed', { offset: 2, limit: 4 });
    expect(page.map((m) => m.id)).toEqual([...ids].reverse().slice(2, 6));
    expect(page.map((m) => m.result)).toEqual([7, 6, 5, 4]);
    expect(await queue.push(topic, 0, { id: 'q0' })).toEqual({ id: 'q0', duplicate: true });
  });

  it('deletes completed records older than maxAgeMs', async () => {
    const topic = uniqueTopic('aged');
    const queue = await fx.service({ keepCompleted: { maxAgeMs: 200 } });
    await queue.push(topic, 1, { id: 'old' });
    await queue.ack((await queue.reserve(topic))[0]);
    expect(await queue.get(topic, 'old')).toMatchObject({ state: 'completed' });
    // The bound is applied by the next completion: complete others until it has aged out.
    let n = 0;
    await eventually(
      async () => {
        await queue.push(topic, n, { id: `new${n++}` });
        await queue.ack((await queue.reserve(topic))[0]);
        return (await queue.get(topic, 'old')) === null;
      },
      5_000,
      50,
    );
    expect(await fx.redis.hexists(`{ackq:${topic}}:messages`, 'old')).toBe(0);
  });
});
