import { QueueKeyTypeError } from '../../lib';
import { eventually, snapshotTopic, type TestClient, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * The paths of a grouped message through the per-group layout (lua/prelude-groups.lua): cancel in
 * every state, a lease that expires, groupConcurrency, what a group leaves behind, and the layout
 * an earlier release (e990c45) left in Redis.
 */

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The keys of a topic that concern groups, with what they hold (the rate-limit ones aside). */
async function groupKeys(redis: TestClient, topic: string): Promise<Record<string, unknown>> {
  const snapshot = await snapshotTopic(redis, topic);
  return Object.fromEntries(Object.entries(snapshot).filter(([key]) => /:group[-:]/.test(key)));
}

describe('ordered groups: every path of a grouped message', () => {
  const fx = useRedis();

  it('cancels a waiting, a delayed and a leased grouped message; the group goes on in push order', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [
      { payload: 1, group: 'g', id: 'a' },
      { payload: 2, group: 'g', id: 'b' },
      { payload: 3, group: 'g', id: 'c', delayMs: 60_000 },
      { payload: 4, group: 'g', id: 'd' },
      { payload: 5, group: 'g', id: 'e' },
    ]);
    const [head] = await queue.reserve(topic, { count: 10 });
    expect(head.id).toBe('a');
    expect(await queue.stats(topic)).toMatchObject({ ready: 3, delayed: 1, leased: 1 });
    expect(await queue.cancel(topic, 'd')).toBe('ready');
    expect(await queue.cancel(topic, 'c')).toBe('delayed');
    expect(await queue.stats(topic)).toMatchObject({ ready: 2, delayed: 0, leased: 1 });
    // The leased head: cancelling it frees the group for its next message.
    expect(await queue.cancel(topic, 'a')).toBe('leased');
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['b']);
    expect(await queue.cancel(topic, 'b')).toBe('leased');
    const [last] = await queue.reserve(topic, { count: 10 });
    expect(last.id).toBe('e');
    await queue.ack(last);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0 });
    // Nothing of the group is left (the turn counter aside).
    expect(Object.keys(await groupKeys(fx.redis, topic))).toEqual([`{ackq:${topic}}:group-sequence`]);
  });

  it('cancels the only waiting message of a group, and its turn is dropped when served', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [
      { payload: 1, group: 'gone', id: 'x' },
      { payload: 2, group: 'kept', id: 'y' },
    ]);
    expect(await queue.cancel(topic, 'x')).toBe('ready');
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['y']);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 1 });
  });

  it('keeps a group whose head lease expired until that message is delivered again and acked', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      [1, 2, 3].map((n) => ({ payload: n, group: 'g', id: `m${n}` })),
    );
    const [first] = await queue.reserve(topic, { count: 10, leaseMs: 50 });
    expect(first.id).toBe('m1');
    // Its consumer is gone: once the lease runs out the head comes back, before the rest of its group.
    const again = await eventually(async () => (await queue.reserve(topic, { count: 10 }))[0]);
    expect(again).toMatchObject({ id: 'm1', attempt: 2 });
    expect(await queue.reserve(topic, { count: 10 })).toEqual([]);
    await queue.ack(again);
    const next = await queue.reserve(topic, { count: 10 });
    expect(next.map((m) => m.id)).toEqual(['m2']);
  });

  it('joins delayed grouped messages to their group in push order, whichever is due first', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [
      { payload: 'x', group: 'g', id: 'x' },
      { payload: 'a', group: 'g', id: 'a', delayMs: 200 },
      { payload: 'b', group: 'g', id: 'b', delayMs: 100 },
    ]);
    const [x] = await queue.reserve(topic, { count: 10 });
    expect(x.id).toBe('x');
    // Both due (b first) while x holds the group: reserves move them into it, and start neither.
    await eventually(async () => (await queue.stats(topic)).delayed === 0);
    expect(await queue.reserve(topic, { count: 10 })).toEqual([]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 2, delayed: 0, leased: 1 });
    await queue.ack(x);
    const [a] = await queue.reserve(topic, { count: 10 });
    expect(a.id).toBe('a');
    await queue.ack(a);
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['b']);
  });

  it('starts up to groupConcurrency of a group at once, in push order', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setLimits(topic, { groupConcurrency: 3 });
    await queue.pushMany(
      topic,
      Array.from({ length: 7 }, (_, n) => ({ payload: n, group: 'g', id: `m${n}` })),
    );
    const batch = await queue.reserve(topic, { count: 10 });
    expect(batch.map((m) => m.id)).toEqual(['m0', 'm1', 'm2']);
    await queue.ack(batch[1]);
    const more = await queue.reserve(topic, { count: 10 });
    expect(more.map((m) => m.id)).toEqual(['m3']);
    await queue.ack(batch[0]);
    await queue.ack(batch[2]);
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['m4', 'm5']);
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, leased: 3 });
  });

  it('serves in order what an earlier release left: waiting, delayed and leased grouped messages', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const tag = `{ackq:${topic}}`;
    const now = await serverNow(fx.redis);
    // The layout e990c45's push.lua and reserve.lua wrote: group g has old-leased started (its
    // lease ends soon, its consumer is gone), old-1 and old-2 waiting in groupQueue, old-late
    // delayed (already due); group h has h-1 waiting and the turn.
    const member = (group: string, sequence: number, id: string) =>
      `${group}\0${String(sequence).padStart(15, '0')}\0${id}`;
    const body = (payload: string, group: string) => `{"t":${now - 1000},"p":"${payload}","g":"${group}"}`;
    const redis = fx.redis;
    await redis.hset(
      `${tag}:messages`,
      ...['old-leased', 'old-1', 'old-2', 'old-late'].flatMap((id) => [id, body(id, 'g')]),
      'h-1',
      body('h-1', 'h'),
    );
    await redis.hset(`${tag}:counters`, 'pushed', 5);
    await redis.zadd(`${tag}:leased`, now + 300, 'old-leased');
    await redis.hset(`${tag}:tokens`, 'old-leased', '7.1');
    await redis.set(`${tag}:sequence`, 7);
    await redis.hset(`${tag}:group-active`, 'old-leased', 'g');
    await redis.hset(`${tag}:group-slots`, 'g', 1);
    await redis.zadd(
      `${tag}:group-queue`,
      0,
      member('g', 2, 'old-1'),
      0,
      member('g', 3, 'old-2'),
      0,
      member('h', 5, 'h-1'),
    );
    await redis.zadd(`${tag}:delayed`, now - 10, 'old-late');
    await redis.hset(
      `${tag}:group-waiting`,
      'old-1',
      member('g', 2, 'old-1'),
      'old-2',
      member('g', 3, 'old-2'),
      'old-late',
      member('g', 4, 'old-late'),
      'h-1',
      member('h', 5, 'h-1'),
    );
    await redis.zadd(`${tag}:group-turns`, 6, 'h');
    await redis.set(`${tag}:group-sequence`, 1000);

    expect(await queue.stats(topic)).toMatchObject({ ready: 4, leased: 1, delayed: 0 });
    expect(await queue.get(topic, 'old-2')).toMatchObject({ state: 'ready', group: 'g' });
    // Pushed now, after all of them: served after them in its group.
    await queue.push(topic, 'new-1', { group: 'g', id: 'new-1' });
    await queue.push(topic, 'h-2', { group: 'h', id: 'h-2' });

    const order: string[] = [];
    queue.consume<string>(topic, (payload) => void order.push(payload), { concurrency: 4 });
    await eventually(() => order.length === 7);
    await queue.waitUntilIdle(topic);
    expect(order.filter((id) => !id.startsWith('h'))).toEqual(['old-leased', 'old-1', 'old-2', 'old-late', 'new-1']);
    expect(order.filter((id) => id.startsWith('h'))).toEqual(['h-1', 'h-2']);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 0, delayed: 0 });
    expect(Object.keys(await groupKeys(fx.redis, topic))).toEqual([`${tag}:group-sequence`]);
  });

  it("refuses a push when a group's key holds another type, changing nothing", async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'kept', { group: 'fine', id: 'keep' });
    for (const group of ['g', 'with space']) {
      await fx.redis.set(`{ackq:${topic}}:group:${group}`, 'foreign');
      const before = await snapshotTopic(fx.redis, topic);
      const failure = queue.pushMany(topic, [
        { payload: 1, group: 'fine' },
        { payload: 2, group },
      ]);
      await expect(failure).rejects.toBeInstanceOf(QueueKeyTypeError);
      const named = group === 'g' ? `{ackq:${topic}}:group:g` : `{ackq:${topic}}:group:*`;
      await expect(failure).rejects.toThrow(`"${named}" holds a string where the queue keeps a zset`);
      expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    }
  });

  it('cancels a message an earlier release left waiting in groupQueue', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const tag = `{ackq:${topic}}`;
    const member = `g\0${String(1).padStart(15, '0')}\0old`;
    await fx.redis.hset(`${tag}:messages`, 'old', '{"t":1,"p":1,"g":"g"}');
    await fx.redis.zadd(`${tag}:group-queue`, 0, member);
    await fx.redis.hset(`${tag}:group-waiting`, 'old', member);
    await fx.redis.zadd(`${tag}:group-turns`, 1, 'g');
    await queue.push(topic, 2, { group: 'g', id: 'new' });
    expect(await queue.stats(topic)).toMatchObject({ ready: 2 });
    expect(await queue.cancel(topic, 'old')).toBe('ready');
    expect(await queue.stats(topic)).toMatchObject({ ready: 1 });
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['new']);
  });
});
