import type { QueueEngine } from '../../lib/engine/queue-engine';
import { ENCODING_ANCHOR, eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * A stored body comes in two forms: JSON ('{"t":<ms>,"p":...}', every release) and compact
 * ('<ms in base 36>|<payload>', for a message without headers, group or maxAttempts). Every
 * reader takes both: reserve, get, list (with and without previews), gauges, completed records,
 * dead letters and their requeue, and a retry's reply (whose due time comes before the body).
 */
describe('stored body forms', () => {
  const fx = useRedis();
  // Before 1994 its base 36 starts with a digit, like a retry's due time in a reserve reply.
  const ENQUEUED = 500_000_000_000;

  /** Pushes `payload` under `id`, then rewrites its stored body in the compact form. */
  async function pushCompact(topic: string, id: string, payload: unknown) {
    const queue = await fx.service();
    await queue.push(topic, payload, { id });
    await fx.redis.hset(`{ackq:${topic}}:messages`, id, `${ENQUEUED.toString(36)}|${JSON.stringify(payload)}`);
  }

  it('reads a compact body in get, list, previews and gauges', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await pushCompact(topic, 'c1', { n: 'x'.repeat(50) });
    expect(await queue.get(topic, 'c1')).toMatchObject({
      state: 'ready',
      payload: { n: 'x'.repeat(50) },
      headers: {},
      enqueuedAt: ENQUEUED,
    });
    const [row] = await queue.list(topic, 'ready');
    expect(row).toMatchObject({ id: 'c1', payload: { n: 'x'.repeat(50) }, enqueuedAt: ENQUEUED });
    const [previewed] = await queue.list(topic, 'ready', { preview: 10 });
    expect(previewed).toMatchObject({
      id: 'c1',
      enqueuedAt: ENQUEUED,
      preview: { text: '{"n":"xxxx', truncated: true },
    });
    expect(previewed.payload).toBeUndefined();
    const [seconds] = await fx.redis.time();
    expect((await queue.gauges(topic)).oldestReadyAgeMs).toBeGreaterThanOrEqual(
      Number(seconds) * 1000 - ENQUEUED - 1_000,
    );
  });

  it('reserves, retries, completes and buries a compact body, and requeues its dead letter', async () => {
    const queue = await fx.service({ maxAttempts: 2, keepCompleted: true });
    const topic = uniqueTopic();
    await pushCompact(topic, 'c2', { n: 2 });
    const [first] = await queue.reserve(topic);
    expect(first).toMatchObject({ id: 'c2', payload: { n: 2 }, enqueuedAt: ENQUEUED, attempt: 1, maxAttempts: 2 });
    await queue.nack(first, { delayMs: 0 });
    // A retry's reply carries its due time before the body.
    const [retry] = await queue.reserve(topic);
    expect(retry).toMatchObject({ id: 'c2', payload: { n: 2 }, enqueuedAt: ENQUEUED, attempt: 2 });
    expect(typeof retry.dueAt).toBe('number');
    await queue.nack(retry, { error: new Error('boom') });
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ id: 'c2', payload: { n: 2 }, enqueuedAt: ENQUEUED });
    const [deadRow] = await queue.list(topic, 'dead', { preview: 100 });
    expect(deadRow).toMatchObject({ id: 'c2', preview: { text: '{"n":2}', truncated: false } });
    expect(await queue.requeueDead(topic)).toBe(1);
    const [again] = await queue.reserve(topic);
    expect(again).toMatchObject({ id: 'c2', payload: { n: 2 }, enqueuedAt: ENQUEUED });
    expect(await queue.ack(again)).toBe(true);
    expect(await queue.get(topic, 'c2')).toMatchObject({ state: 'completed', enqueuedAt: ENQUEUED });
  });

  it('still reads the JSON form', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, { n: 3 }, { id: 'j1' });
    await fx.redis.hset(`{ackq:${topic}}:messages`, 'j1', `{"t":${ENQUEUED},"p":{"n":3},"h":{"k":"v"},"m":3}`);
    expect(await queue.get(topic, 'j1')).toMatchObject({ payload: { n: 3 }, headers: { k: 'v' }, maxAttempts: 3 });
    const [message] = await queue.reserve(topic);
    expect(message).toMatchObject({ id: 'j1', payload: { n: 3 }, enqueuedAt: ENQUEUED, maxAttempts: 3 });
  });

  /** The stored body of `id`. */
  const stored = (prefix: string, topic: string, id: string) => fx.redis.hget(`{${prefix}:${topic}}:messages`, id);

  it('stores plain messages compact on a fresh prefix, and messages with headers, group or maxAttempts as JSON', async () => {
    const queue = await fx.service({ prefix: 'fresh' });
    const topic = uniqueTopic();
    expect(await queue.storedFormat()).toBe('compact');
    await queue.pushMany(topic, [
      { id: 'plain', payload: { n: 1 }, delayMs: 0, priority: 3 },
      { id: 'headers', payload: 2, headers: { k: 'v' } },
      { id: 'attempts', payload: 3, maxAttempts: 2 },
      { id: 'grouped', payload: 4, group: 'g' },
    ]);
    expect(await stored('fresh', topic, 'plain')).toMatch(/^[0-9a-z]+\|\{"n":1\}$/);
    expect(await stored('fresh', topic, 'headers')).toMatch(/^\{"t":\d+,"p":2,"h":\{"k":"v"\}\}$/);
    expect(await stored('fresh', topic, 'attempts')).toMatch(/^\{"t":\d+,"p":3,"m":2\}$/);
    expect(await stored('fresh', topic, 'grouped')).toMatch(/^\{"t":\d+,"p":4,"g":"g"\}$/);
    const [seconds] = await fx.redis.time();
    const message = (await queue.reserve(topic, { count: 4 })).find((m) => m.id === 'plain')!;
    expect(message).toMatchObject({ id: 'plain', payload: { n: 1 } });
    expect(Math.abs(message.enqueuedAt - Number(seconds) * 1000)).toBeLessThan(60_000);
  });

  it('keeps JSON on a prefix an older release used until it is switched, then every service stores compact', async () => {
    // What a release before this one leaves at connect: the data marker (or a topic registry).
    await fx.redis.set('{older:}:data-marker', 'token of an older release');
    const queue = await fx.service({ prefix: 'older' });
    const topic = uniqueTopic();
    expect(await queue.storedFormat()).toBe('json');
    await queue.push(topic, 1, { id: 'before' });
    expect(await stored('older', topic, 'before')).toMatch(/^\{"t":\d+,"p":1\}$/);
    // A later service keeps the prefix's choice.
    const later = await fx.service({ prefix: 'older' });
    await later.push(topic, 2, { id: 'later' });
    expect(await stored('older', topic, 'later')).toMatch(/^\{"t":/);

    await expect(queue.setStoredFormat('binary' as never)).rejects.toThrow(/'json' or 'compact'/);
    await queue.setStoredFormat('compact');
    await queue.push(topic, 3, { id: 'after' });
    expect(await stored('older', topic, 'after')).toMatch(/^[0-9a-z]+\|3$/);
    const next = await fx.service({ prefix: 'older' });
    expect(await next.storedFormat()).toBe('compact');
    await next.push(topic, 4, { id: 'next' });
    expect(await stored('older', topic, 'next')).toMatch(/^[0-9a-z]+\|4$/);
    expect((await queue.reserve(topic, { count: 4 })).map((m) => m.payload)).toEqual([1, 2, 3, 4]);
  });

  it('keeps grouped messages where an older release looks, and no encoding anchor, until the prefix is compact', async () => {
    await fx.redis.set('{legacy:}:data-marker', 'token of an older release');
    const queue = await fx.service({ prefix: 'legacy' });
    const topic = uniqueTopic();
    const tag = `{legacy:${topic}}`;
    expect(await queue.storedFormat()).toBe('json');
    await queue.pushMany(topic, [
      { id: 'a1', payload: 1, group: 'a' },
      { id: 'a2', payload: 2, group: 'a' },
      { id: 'b1', payload: 3, group: 'b' },
      { id: 'a3', payload: 4, group: 'a', delayMs: 1 },
    ]);
    // Where a release before 0.2 reads them: groupQueue members '<group>\0<sequence>\0<id>', groupWaiting beside.
    const members = await fx.redis.zrange(`${tag}:group-queue`, '0', '-1');
    expect(members.map((m) => m.split('\0')[2])).toEqual(['a1', 'a2', 'b1']);
    expect(await fx.redis.hlen(`${tag}:group-waiting`)).toBe(4);
    expect(await fx.redis.exists(`${tag}:group:a`, `${tag}:group:b`)).toBe(0);
    // Served in push order within each group; the delayed one joins groupQueue when due, behind a2.
    const order: string[] = [];
    for (let round = 0; order.length < 4 && round < 50; round++) {
      const leased = await queue.reserve(topic, { count: 4 });
      if (leased.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await fx.redis.zscore(`${tag}:leased`, ENCODING_ANCHOR)).toBeNull();
      expect(await fx.redis.exists(`${tag}:group:a`)).toBe(0);
      for (const message of leased) {
        order.push(message.id);
        expect(await queue.ack(message)).toBe(true);
      }
    }
    expect(order.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(order).toContain('b1');
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0 });

    await queue.setStoredFormat('compact');
    await queue.pushMany(topic, [
      { id: 'a4', payload: 5, group: 'a' },
      { id: 'p1', payload: 6 },
    ]);
    expect(await fx.redis.zrange(`${tag}:group:a`, '0', '-1')).toEqual(['a4']);
    const leased = await queue.reserve(topic, { count: 2 });
    expect(leased.map((m) => m.id).sort()).toEqual(['a4', 'p1']);
    expect(await fx.redis.zscore(`${tag}:leased`, ENCODING_ANCHOR)).toBe('inf');
  });

  it('starts a delayed grouped message that joins groupQueue in the same reserve that acks another group', async () => {
    await fx.redis.set('{legacy2:}:data-marker', 'token of an older release');
    const queue = await fx.service({ prefix: 'legacy2' });
    const topic = uniqueTopic();
    await queue.push(topic, 'x', { id: 'x1', group: 'x' });
    const [x1] = await queue.reserve(topic, { leaseMs: 60_000 });
    await queue.push(topic, 'y', { id: 'y1', group: 'y', delayMs: 20 });
    await eventually(async () => ((await queue.get(topic, 'y1'))?.dueAt ?? Infinity) <= Date.now() - 5);
    // What a consumer does: the ack of x1 rides on the reserve that finds y1 due. The ack reads
    // groupQueue (empty then) before y1 joins it; y1 must start all the same.
    const engine = (queue as unknown as { core: { engine: QueueEngine } }).core.engine;
    const reserved = await engine.reserve(topic, 0, { count: 5, leaseMs: 60_000, maxAttempts: 5 }, [x1]);
    expect(reserved.acked).toEqual([true]);
    expect(reserved.messages.map((m) => m.id)).toEqual(['y1']);
  });
});
