import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('nack, retries and dead letters', () => {
  const fx = useRedis();

  it('puts a failed message in delayed for its backoff, then ready again', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic);
    expect(await queue.nack(message, { delayMs: 300, error: new Error('try later') })).toBe('retry');
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 1, leased: 0, dead: 0, paused: false });
    expect(await queue.reserve(topic)).toEqual([]);
    const again = await eventually(async () => (await queue.reserve(topic))[0]);
    expect(again.attempt).toBe(2);
  });

  it('uses the configured backoff when no delay is given', async () => {
    const queue = await fx.service({ backoff: { type: 'fixed', delayMs: 60_000 } });
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic);
    await queue.nack(message, { error: new Error('no') });
    const [, due] = await fx.redis.zrange(`{ackq:${topic}}:delayed`, '0', '0', 'WITHSCORES');
    const [seconds] = await fx.redis.time();
    expect(Number(due) - Number(seconds) * 1000).toBeGreaterThan(55_000);
  });

  it('dead-letters after maxAttempts with the error message and a short stack', async () => {
    const queue = await fx.service({ maxAttempts: 2 });
    const topic = uniqueTopic();
    const { id } = await queue.push(topic, { order: 9 }, { headers: { h: '1' } });
    const [first] = await queue.reserve(topic);
    expect(await queue.nack(first, { delayMs: 0, error: new Error('first failure') })).toBe('retry');
    const [second] = await queue.reserve(topic);
    expect(await queue.nack(second, { delayMs: 0, error: new TypeError('card declined') })).toBe('dead');
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 1, paused: false });
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({
      id,
      topic,
      reason: 'failed',
      attempt: 2,
      payload: { order: 9 },
      headers: { h: '1' },
    });
    expect(letter.error).toMatch(/^TypeError: card declined\n\s+at /);
    expect(letter.error!.split('\n').length).toBeLessThanOrEqual(6);
    expect(letter.deadAt).toBeGreaterThan(0);
  });

  it('honours a per-message maxAttempts over the default', async () => {
    const queue = await fx.service({ maxAttempts: 5 });
    const topic = uniqueTopic();
    await queue.push(topic, 'x', { maxAttempts: 1 });
    const [message] = await queue.reserve(topic);
    expect(message.maxAttempts).toBe(1);
    expect(await queue.nack(message, { error: 'plain string error' })).toBe('dead');
    expect((await queue.deadLetters(topic))[0].error).toBe('plain string error');
  });

  it('dead-letters a message whose last lease expired (a crashed consumer counts)', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x', { maxAttempts: 1 });
    await queue.reserve(topic, { leaseMs: 50 });
    await eventually(async () => (await queue.stats(topic)).leased === 0);
    expect(await queue.reserve(topic)).toEqual([]);
    expect((await queue.deadLetters(topic))[0]).toMatchObject({ reason: 'expired', attempt: 1 });
  });

  it('sends an unparsable stored body to dead as malformed and serves the next message', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const { id: bad } = await queue.push(topic, 'will be damaged');
    await queue.push(topic, 'good');
    await fx.redis.hset(`{ackq:${topic}}:messages`, bad, '{not json');
    const reserved = await queue.reserve(topic, { count: 2 });
    expect(reserved.map((m) => m.payload)).toEqual(['good']);
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ id: bad, reason: 'malformed', payload: undefined });
  });

  it('requeues one, some or all dead letters with attempts reset', async () => {
    const queue = await fx.service({ maxAttempts: 1 });
    const topic = uniqueTopic();
    const ids = (
      await queue.pushMany(
        topic,
        [1, 2, 3, 4].map((n) => ({ payload: n })),
      )
    ).map((r) => r.id);
    for (const message of await queue.reserve(topic, { count: 4 }))
      await queue.nack(message, { error: new Error('x') });
    expect((await queue.stats(topic)).dead).toBe(4);
    expect(await queue.requeueDead(topic, [ids[0]])).toBe(1);
    expect(await queue.requeueDead(topic, [ids[1], 'no-such-id'])).toBe(1);
    expect(await queue.stats(topic)).toMatchObject({ ready: 2, dead: 2, paused: false });
    expect(await queue.requeueDead(topic)).toBe(2);
    const again = await queue.reserve(topic, { count: 4 });
    expect(again.map((m) => m.attempt)).toEqual([1, 1, 1, 1]);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 4, dead: 0, paused: false });
  });

  it('purges dead letters for good, by id or all', async () => {
    const queue = await fx.service({ maxAttempts: 1 });
    const topic = uniqueTopic();
    const ids = (
      await queue.pushMany(
        topic,
        [1, 2, 3].map((n) => ({ payload: n })),
      )
    ).map((r) => r.id);
    for (const message of await queue.reserve(topic, { count: 3 })) await queue.nack(message);
    expect(await queue.purgeDead(topic, [ids[0]])).toBe(1);
    expect((await queue.deadLetters(topic)).map((d) => d.id)).toEqual([ids[1], ids[2]]);
    expect(await queue.purgeDead(topic)).toBe(2);
    expect(await fx.redis.hlen(`{ackq:${topic}}:messages`)).toBe(0);
    expect(await queue.push(topic, 'reuse', { id: ids[0] })).toMatchObject({ duplicate: false });
  });

  it('pages through dead letters oldest first', async () => {
    const queue = await fx.service({ maxAttempts: 1 });
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ id: `d${i}`, payload: i })),
    );
    for (const message of await queue.reserve(topic, { count: 5 })) await queue.nack(message);
    const page = await queue.deadLetters(topic, { offset: 1, limit: 2 });
    expect(page.map((d) => d.id)).toEqual(['d1', 'd2']);
  });

  it('lists, requeues and purges a foreign entry in the dead-letter set without failing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await fx.redis.zadd(`{ackq:${topic}}:dead`, 1, 'foreign');
    await fx.redis.hset(`{ackq:${topic}}:dead-info`, 'half', 'not json');
    await fx.redis.zadd(`{ackq:${topic}}:dead`, 2, 'half');
    const letters = await queue.deadLetters(topic);
    expect(letters).toEqual([
      expect.objectContaining({ id: 'foreign', reason: 'unknown', payload: undefined, error: null }),
      expect.objectContaining({ id: 'half', reason: 'unknown', payload: undefined }),
    ]);
    // Nothing to deliver: requeue drops them rather than queueing an id without a body.
    expect(await queue.requeueDead(topic, ['foreign'])).toBe(0);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 1, paused: false });
    expect(await queue.purgeDead(topic)).toBe(1);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
  });
});
