import { commandCounts, mastersOf, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('push', () => {
  const fx = useRedis();

  it('stores a message as ready and returns a new id', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const { id, duplicate } = await queue.push(topic, { order: 1 }, { headers: { trace: 't-1' } });
    expect(duplicate).toBe(false);
    expect(await queue.stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 0, dead: 0, paused: false });
    const [message] = await queue.reserve(topic);
    expect(message).toMatchObject({ id, topic, payload: { order: 1 }, headers: { trace: 't-1' }, attempt: 1 });
  });

  it('loads its script again when Redis lost its scripts: a lone push goes out past auto-pipelining', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 1);
    for (const master of await mastersOf(fx.redis)) await master.script('FLUSH');
    // Nothing else outstanding: sent at once (see ScriptRunner.run), so ioredis' NOSCRIPT retry runs on that path.
    const { id } = await queue.push(topic, 2);
    expect((await queue.stats(topic)).ready).toBe(2);
    const messages = await queue.reserve(topic, { count: 2 });
    expect(messages.map((m) => m.payload)).toEqual([1, 2]);
    expect(messages[1].id).toBe(id);
  });

  it('gives each message its own id across services', async () => {
    const [a, b] = [await fx.service(), await fx.service()];
    const topic = uniqueTopic();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).push(topic, i)));
    expect(new Set(results.map((r) => r.id)).size).toBe(50);
    expect((await a.stats(topic)).ready).toBe(50);
  });

  it.each(['ready', 'delayed', 'leased', 'dead'])(
    'treats an id that exists as %s as a duplicate and changes nothing',
    async (state) => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      await queue.push(topic, 'first', { id: 'order-7', delayMs: state === 'delayed' ? 60_000 : 0, maxAttempts: 1 });
      if (state === 'leased' || state === 'dead') {
        const [message] = await queue.reserve(topic);
        if (state === 'dead') await queue.nack(message, { error: new Error('boom') });
      }
      const before = await snapshotTopic(fx.redis, topic);
      const result = await queue.push(topic, 'second', { id: 'order-7' });
      expect(result).toEqual({ id: 'order-7', duplicate: true });
      expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    },
  );

  it('makes short ids from a number Redis issues once per service, then a counter', async () => {
    const [a, b] = [await fx.service(), await fx.service()];
    const topic = uniqueTopic();
    const before = await commandCounts(fx.redis);
    const ids = [
      ...(await a.pushMany(topic, [{ payload: 1 }, { payload: 2 }])),
      ...(await b.pushMany(topic, [{ payload: 3 }])),
      ...(await a.pushMany(topic, [{ payload: 4 }])),
    ].map((r) => r.id);
    const after = await commandCounts(fx.redis);
    expect(after.incr - (before.incr ?? 0)).toBe(2);
    const shape = /^([0-9a-z]+[A-Z]{4})([0-9a-z]+)$/;
    const [a0, a1, b0, a2] = ids.map((id) => shape.exec(id)!);
    expect([a0[2], a1[2], b0[2], a2[2]]).toEqual(['0', '1', '0', '2']);
    expect(new Set([a0[1], a1[1], a2[1]]).size).toBe(1);
    expect(b0[1]).not.toBe(a0[1]);
    expect(a0[0].length).toBeLessThanOrEqual(10);
  });

  it('makes ids of a random prefix when Redis refuses the INCR', async () => {
    const queue = await fx.service({ prefix: 'refused' });
    const topic = uniqueTopic();
    // Not a number: INCR fails with a reply error.
    await fx.redis.set('{refused:}:id-prefixes', 'not a number');
    const [first, second] = await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }]);
    expect(first.id).toMatch(/^[\w-]{12}0$/);
    expect(second.id).toBe(`${first.id.slice(0, 12)}1`);
    expect((await queue.stats(topic)).ready).toBe(2);
  });

  it('accepts an id again once its message was acked', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 1, { id: 'x' });
    const [message] = await queue.reserve(topic);
    expect(await queue.ack(message)).toBe(true);
    expect(await queue.push(topic, 2, { id: 'x' })).toEqual({ id: 'x', duplicate: false });
  });

  it('keeps one message when 100 pushes of one id race', async () => {
    const queues = [await fx.service(), await fx.service(), await fx.service()];
    const topic = uniqueTopic();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => queues[i % 3].push(topic, { copy: i }, { id: 'same' })),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(results.filter((r) => r.duplicate)).toHaveLength(99);
    expect(await queues[0].stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('pushes a batch in one round trip, in order, with per-item duplicates', async () => {
    // History off and the other services closed: a history flush would be a second call.
    await fx.closeServices();
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await queue.push(topic, 'existing', { id: 'b-3' });
    const before = await commandCounts(fx.redis);
    const items = Array.from({ length: 200 }, (_, i) => ({ id: `b-${i}`, payload: { n: i } }));
    const results = await queue.pushMany(topic, items);
    const after = await commandCounts(fx.redis);
    expect(after.evalsha - (before.evalsha ?? 0)).toBe(1);
    expect(results.filter((r) => r.duplicate).map((r) => r.id)).toEqual(['b-3']);
    const reserved = await queue.reserve(topic, { count: 200 });
    expect(reserved.map((m) => m.id)).toEqual(['b-3', ...items.filter((i) => i.id !== 'b-3').map((i) => i.id)]);
  });

  it('keeps push order, duplicates and every option in a batch mixing plain messages and messages with options', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const results = await queue.pushMany(topic, [
      { id: 'a1', payload: 1 },
      // Due already: ready, after a1 and before a3.
      { id: 'a2', payload: 2, availableAt: Date.now() - 60_000 },
      { id: 'a3', payload: 3 },
      { id: 'a1', payload: 'again', delayMs: 60_000 },
      { id: 'p', payload: 'high', priority: 5 },
      { id: 'd', payload: 'later', delayMs: 60_000 },
      { id: 'g', payload: 'grouped', group: 'g1' },
      { id: 'a4', payload: 4, headers: { k: 'v' }, maxAttempts: 2 },
      { id: 'd', payload: 'again' },
    ]);
    expect(results.filter((r) => r.duplicate).map((r) => r.id)).toEqual(['a1', 'd']);
    expect(await queue.stats(topic)).toMatchObject({ delayed: 1 });
    expect((await queue.get(topic, 'd'))?.state).toBe('delayed');
    const reserved = await queue.reserve(topic, { count: 10 });
    expect(reserved.map((m) => m.id).filter((id) => id !== 'g')).toEqual(['p', 'a1', 'a2', 'a3', 'a4']);
    expect(reserved.find((m) => m.id === 'g')).toMatchObject({ payload: 'grouped', group: 'g1' });
    expect(reserved.find((m) => m.id === 'a1')?.payload).toBe(1);
    expect(reserved.find((m) => m.id === 'a4')).toMatchObject({ payload: 4, headers: { k: 'v' }, maxAttempts: 2 });
  });

  it('splits a very large batch into bounded script calls sent together', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const results = await queue.pushMany(
      topic,
      Array.from({ length: 2_000 }, (_, i) => ({ payload: i })),
    );
    expect(results.every((r) => !r.duplicate)).toBe(true);
    expect((await queue.stats(topic)).ready).toBe(2_000);
  });

  it('stores enqueuedAt from the server clock', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const [seconds, micros] = await fx.redis.time();
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic);
    const serverMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    expect(message.enqueuedAt).toBeGreaterThanOrEqual(serverMs);
    expect(message.enqueuedAt).toBeLessThan(serverMs + 5_000);
  });
});
