import { ENCODING_ANCHOR, eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('reserve, ack, extendLease', () => {
  const fx = useRedis();

  it('leases messages in push order with attempt, token and a server-clock deadline', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      [1, 2, 3].map((n) => ({ payload: n })),
    );
    const reserved = await queue.reserve<number>(topic, { count: 2, leaseMs: 5_000 });
    expect(reserved.map((m) => m.payload)).toEqual([1, 2]);
    const [seconds] = await fx.redis.time();
    for (const message of reserved) {
      expect(message.attempt).toBe(1);
      expect(message.token).toEqual(expect.any(String));
      expect(message.leaseDeadline).toBeGreaterThan(Number(seconds) * 1000 + 3_000);
    }
    expect(reserved[0].token).not.toBe(reserved[1].token);
    expect(await queue.stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 2, dead: 0, paused: false });
  });

  it('keeps the leases and their tokens in hashed encodings, with an anchor no count, list or lookup shows', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }]);
    const [first] = await queue.reserve(topic, { count: 1 });
    // A small ZSET or HASH is a listpack, scanned by every insert and look-up: the anchor
    // (longer than any message id) makes Redis use a skiplist and a hash table from the first lease.
    expect(await fx.redis.object('ENCODING', `{ackq:${topic}}:leased`)).toBe('skiplist');
    expect(await fx.redis.object('ENCODING', `{ackq:${topic}}:tokens`)).toBe('hashtable');
    expect(await fx.redis.zscore(`{ackq:${topic}}:leased`, ENCODING_ANCHOR)).toBe('inf');
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, leased: 1 });
    expect((await queue.list(topic, 'leased')).map((m) => m.id)).toEqual([first.id]);
    await queue.reserve(topic, { count: 1 });
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 2 });
    expect(await queue.list(topic, 'leased', { offset: 1 })).toHaveLength(1);
    expect(await queue.get(topic, ENCODING_ANCHOR.slice(0, 256))).toBeNull();
  });

  it('returns nothing when no message is ready', async () => {
    const queue = await fx.service();
    expect(await queue.reserve(uniqueTopic(), { count: 10 })).toEqual([]);
  });

  it('acks for good: the message and all its traces are gone', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic);
    expect(await queue.ack(message)).toBe(true);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    const left = await snapshotTopic(fx.redis, topic);
    // Only the topic's counters stay: tokens, pushes and acks (and an unconsumed wake-up token).
    expect(Object.keys(left).filter((k) => !/:(sequence|wake|counters)$/.test(k))).toEqual([]);
    expect(left[`{ackq:${topic}}:counters`]).toEqual({ pushed: '1', acked: '1' });
    // Acking again changes nothing and says so: there is nothing left to ack. (An ack whose
    // reply a dropped connection lost, resent by ioredis, still counts: see connection-cut.)
    expect(await queue.ack(message)).toBe(false);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(left);
  });

  it('says false for an ack of a message that does not exist, or of a real one under another topic', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const other = uniqueTopic('other');
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic);
    const before = await snapshotTopic(fx.redis, topic);
    expect(await queue.ack({ ...message, id: 'never-pushed' })).toBe(false);
    expect(await queue.ack({ ...message, topic: other })).toBe(false);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    expect(await queue.ack(message)).toBe(true);
  });

  it('redelivers after the lease expires, with the attempt counted and a new token', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [first] = await queue.reserve(topic, { leaseMs: 100 });
    const second = await eventually(async () => (await queue.reserve(topic, { leaseMs: 10_000 }))[0]);
    expect(second.id).toBe(first.id);
    expect(second.attempt).toBe(2);
    expect(second.token).not.toBe(first.token);
  });

  it('counts expiries and nacks as attempts, not releases, through every path, and leaves no trace', async () => {
    const queue = await fx.service({ maxAttempts: 4 });
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [first] = await queue.reserve(topic, { leaseMs: 100 });
    expect(first.attempt).toBe(1);
    const second = await eventually(async () => (await queue.reserve(topic, { leaseMs: 10_000 }))[0]);
    expect(second.attempt).toBe(2);
    expect(await queue.nack(second, { delayMs: 0 })).toBe('retry');
    const [third] = await queue.reserve(topic, { leaseMs: 10_000 });
    expect(third.attempt).toBe(3);
    expect(await queue.release(third)).toBe(true);
    const [again] = await queue.reserve(topic, { leaseMs: 10_000 });
    expect(again.attempt).toBe(3);
    expect(await queue.nack(again, { delayMs: 0 })).toBe('retry');
    const [last] = await queue.reserve(topic, { leaseMs: 10_000 });
    expect(last.attempt).toBe(4);
    expect(await queue.nack(last, { error: new Error('no more') })).toBe('dead');
    expect((await queue.deadLetters(topic))[0]).toMatchObject({ reason: 'failed', attempt: 4 });
    expect(await queue.requeueDead(topic)).toBe(1);
    const [fresh] = await queue.reserve(topic, { leaseMs: 10_000 });
    expect(fresh.attempt).toBe(1);
    expect(await queue.ack(fresh)).toBe(true);
    const left = await snapshotTopic(fx.redis, topic);
    expect(Object.keys(left).filter((k) => !/:(sequence|wake|counters)$/.test(k))).toEqual([]);
  });

  it('nacks a lease made by an older version (a token without the attempt) with the attempt it counted', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic, { leaseMs: 10_000 });
    // What an older version left: a plain sequence token, the attempt counted in the attempts hash.
    await fx.redis.hset(`{ackq:${topic}}:tokens`, message.id, '12345');
    await fx.redis.hset(`{ackq:${topic}}:attempts`, message.id, '1');
    expect(await queue.nack({ ...message, token: '12345' }, { delayMs: 0 })).toBe('retry');
    const [again] = await queue.reserve(topic, { leaseMs: 10_000 });
    expect(again.attempt).toBe(2);
  });

  it('refuses a stale token on ack, nack and extend, and changes nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [stale] = await queue.reserve(topic, { leaseMs: 100 });
    const current = await eventually(async () => (await queue.reserve(topic, { leaseMs: 10_000 }))[0]);
    const before = await snapshotTopic(fx.redis, topic);
    expect(await queue.ack(stale)).toBe(false);
    expect(await queue.nack(stale, { error: new Error('late') })).toBe('lost');
    expect(await queue.extendLease(stale, 60_000)).toBe(false);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    expect(await queue.ack(current)).toBe(true);
  });

  it('keeps a lease alive with extendLease', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    // Over two leases in all, extended every 300 ms: a stall must pass 700 ms to lose it.
    const [message] = await queue.reserve(topic, { leaseMs: 1_000 });
    for (let i = 0; i < 7; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await queue.extendLease(message, 1_000)).toBe(true);
      expect(await queue.reserve(topic)).toEqual([]);
    }
    expect(await queue.ack(message)).toBe(true);
  });

  it('counts attempts up on every reserve', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x', { maxAttempts: 10 });
    const attempts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [message] = await queue.reserve(topic);
      attempts.push(message.attempt);
      await queue.nack(message, { delayMs: 0 });
    }
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('gives one message to exactly one of many racing consumers', async () => {
    const queues = [await fx.service(), await fx.service(), await fx.service()];
    const topic = uniqueTopic();
    await queues[0].pushMany(
      topic,
      Array.from({ length: 300 }, (_, i) => ({ payload: i })),
    );
    const batches = await Promise.all(
      Array.from({ length: 30 }, (_, i) => queues[i % 3].reserve<number>(topic, { count: 20 })),
    );
    const ids = batches.flat().map((m) => m.id);
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
  });

  it('moves expired leases and due delayed messages in bounded steps', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 1_500 }, (_, i) => ({ payload: i })),
    );
    await Promise.all([
      queue.reserve(topic, { count: 1_000, leaseMs: 500 }),
      queue.reserve(topic, { count: 500, leaseMs: 500 }),
    ]);
    await eventually(async () => (await queue.stats(topic)).leased === 0);
    // One call moves at most 1000 expired leases back; the next call moves the rest.
    const first = await queue.reserve(topic, { count: 1 });
    expect(first).toHaveLength(1);
    // Counted without the encoding anchor (score +inf).
    const leases = () => fx.redis.zcount(`{ackq:${topic}}:leased`, '-inf', '(inf');
    expect(await leases()).toBe(500 + 1);
    await queue.reserve(topic, { count: 1 });
    expect(await leases()).toBe(2);
  });
});
