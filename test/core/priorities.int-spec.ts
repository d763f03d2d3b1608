import { InvalidOptionError } from '../../lib';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

const payloads = (messages: { payload: unknown }[]) => messages.map((m) => m.payload);

describe('priorities', () => {
  const fx = useRedis();

  it('refuses a bad priority before Redis is touched', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    for (const priority of [-1, 10, 1.5, '3', NaN, null]) {
      await expect(queue.push(topic, 'x', { priority: priority as number })).rejects.toThrow(InvalidOptionError);
      await expect(
        queue.pushMany(topic, [{ payload: 'ok' }, { payload: 'y', priority: priority as number }]),
      ).rejects.toThrow(/Invalid priority/);
    }
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('serves the highest level first, first in first out within a level', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'a0');
    await queue.push(topic, 'b5', { priority: 5 });
    await queue.pushMany(topic, [
      { payload: 'c9', priority: 9 },
      { payload: 'd0', priority: 0 },
      { payload: 'e5', priority: 5 },
      { payload: 'f1', priority: 1 },
      { payload: 'g9', priority: 9 },
    ]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 7 });
    expect(payloads(await queue.reserve(topic, { count: 3 }))).toEqual(['c9', 'g9', 'b5']);
    expect(payloads(await queue.reserve(topic, { count: 10 }))).toEqual(['e5', 'f1', 'a0', 'd0']);
    // Emptied levels leave no marker behind.
    expect(await fx.redis.zcard(`{ackq:${topic}}:ready-levels`)).toBe(0);
  });

  it('keeps a plain topic on the plain ready list: no priority keys at all', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2, delayMs: 60_000 }]);
    const [message] = await queue.reserve(topic);
    await queue.nack(message, { delayMs: 0 });
    const keys = Object.keys(await snapshotTopic(fx.redis, topic));
    expect(keys.filter((key) => /:(ready:\d|ready-levels|priority|deferrals|paused)$/.test(key))).toEqual([]);
  });

  it('sends retries to the tail of their own level, at once or once due', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 'a', priority: 7 }, { payload: 'b', priority: 7 }, { payload: 'low' }]);
    const [a] = await queue.reserve(topic);
    expect(await queue.nack(a, { delayMs: 0 })).toBe('retry');
    const [b, retried] = await queue.reserve(topic, { count: 2 });
    expect([b.payload, retried.payload, retried.attempt]).toEqual(['b', 'a', 2]);
    expect(await queue.nack(retried, { delayMs: 30 })).toBe('retry');
    await queue.push(topic, 'c', { priority: 7 });
    await eventually(async () => (await queue.stats(topic)).delayed === 0);
    expect(payloads(await queue.reserve(topic, { count: 3 }))).toEqual(['c', 'a', 'low']);
  });

  it('sends released and expired leases to the head of their level', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 'low' }, { payload: 'a', priority: 4 }, { payload: 'b', priority: 4 }]);
    const [a] = await queue.reserve(topic, { leaseMs: 60 });
    expect(a.payload).toBe('a');
    await eventually(async () => (await queue.stats(topic)).leased === 0);
    const again = await queue.reserve(topic, { count: 3 });
    expect(again.map((m) => [m.payload, m.attempt])).toEqual([
      ['a', 2],
      ['b', 1],
      ['low', 1],
    ]);
    // handBack order: release the later ones first so the first keeps the head.
    for (const message of [...again].reverse()) expect(await queue.release(message)).toBe(true);
    expect(payloads(await queue.reserve(topic, { count: 3 }))).toEqual(['a', 'b', 'low']);
  });

  it('requeues a dead letter to its own level', async () => {
    const queue = await fx.service({ maxAttempts: 1 });
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 'high', priority: 6 }, { payload: 'low' }]);
    const [high] = await queue.reserve(topic);
    expect(await queue.nack(high, { delayMs: 0, error: new Error('x') })).toBe('dead');
    await queue.push(topic, 'low2');
    expect(await queue.requeueDead(topic)).toBe(1);
    expect(payloads(await queue.reserve(topic, { count: 3 }))).toEqual(['high', 'low', 'low2']);
  });

  it('counts every level in stats and gauges, and leaves nothing behind once acked', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 1, priority: 3 }, { payload: 2, priority: 8 }, { payload: 3 }]);
    expect(await queue.stats(topic)).toEqual({ ready: 3, delayed: 0, leased: 0, dead: 0, paused: false });
    expect(await queue.gauges(topic)).toMatchObject({ ready: 3 });
    expect((await queue.gauges(topic)).oldestReadyAgeMs).toBeGreaterThanOrEqual(0);
    for (const message of await queue.reserve(topic, { count: 3 })) expect(await queue.ack(message)).toBe(true);
    const keys = Object.keys(await snapshotTopic(fx.redis, topic));
    expect(keys.filter((k) => !/:(sequence|wake|counters)$/.test(k))).toEqual([]);
  });

  it('get, list and cancel see every level: list ready in serving order, get says the priority, cancel leaves no trace', async () => {
    const queue = await fx.service({ keepCompleted: true });
    const topic = uniqueTopic();
    await queue.pushMany(topic, [
      { id: 'a0', payload: 'a0' },
      { id: 'b5', payload: 'b5', priority: 5 },
      { id: 'c9', payload: 'c9', priority: 9 },
      { id: 'd5', payload: 'd5', priority: 5 },
      { id: 'e0', payload: 'e0' },
    ]);
    const ready = await queue.list(topic, 'ready');
    expect(ready.map((m) => m.id)).toEqual(['c9', 'b5', 'd5', 'a0', 'e0']);
    expect((await queue.list(topic, 'ready', { offset: 2, limit: 2 })).map((m) => m.id)).toEqual(['d5', 'a0']);
    expect(await queue.get(topic, 'b5')).toMatchObject({ state: 'ready', priority: 5, payload: 'b5' });
    expect((await queue.get(topic, 'a0'))?.priority).toBeUndefined();

    // Cancelling the only level-9 message empties its level: reserve serves level 5 next.
    expect(await queue.cancel(topic, 'c9')).toBe('ready');
    expect(await queue.cancel(topic, 'b5')).toBe('ready');
    expect(await queue.get(topic, 'c9')).toBeNull();
    expect(await fx.redis.zrange(`{ackq:${topic}}:ready-levels`, '0', '-1')).toEqual(['5']);
    expect(await fx.redis.hkeys(`{ackq:${topic}}:priority`)).toEqual(['d5']);
    const [next] = await queue.reserve(topic);
    expect(next.id).toBe('d5');
    // A completed message keeps no priority entry behind.
    await queue.ack(next);
    expect(await queue.get(topic, 'd5')).toMatchObject({ state: 'completed' });
    expect(await fx.redis.exists(`{ackq:${topic}}:priority`, `{ackq:${topic}}:ready-levels`)).toBe(0);
    expect(await queue.stats(topic)).toEqual({ ready: 2, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('works on a partitioned topic: each partition serves its highest level first', async () => {
    const topic = uniqueTopic('prio');
    const queue = await fx.service({ topics: { [topic]: { partitions: 3 } } });
    const items = Array.from({ length: 30 }, (_, i) => ({ payload: i, priority: i % 10 }));
    await queue.pushMany(topic, items);
    expect(await queue.stats(topic)).toMatchObject({ ready: 30 });
    const seen: number[] = [];
    const consumer = queue.consume<number>(topic, (n) => void seen.push(n));
    await eventually(() => seen.length === 30);
    await consumer.close();
    expect([...seen].sort((a, b) => a - b)).toEqual(items.map((item) => item.payload));
    // Within each partition's first batch, levels come highest first.
    const firstBatch = await queue.pushMany(topic, [
      { id: 'p-low', payload: -1 },
      { id: 'p-high', payload: -2, priority: 9 },
    ]);
    expect(firstBatch.every((r) => !r.duplicate)).toBe(true);
    expect(await queue.stats(topic)).toMatchObject({ ready: 2 });
  });
});
