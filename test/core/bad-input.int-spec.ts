import {
  InvalidMessageIdError,
  InvalidOptionError,
  InvalidPayloadError,
  InvalidTopicError,
  PayloadTooLargeError,
  QueueKeyTypeError,
  type RedisAckQueueService,
} from '../../lib';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

type Case = [
  name: string,
  call: (q: RedisAckQueueService, topic: string) => Promise<unknown>,
  error: abstract new (...args: never[]) => Error,
  text: RegExp,
];

const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

const cases: Case[] = [
  ['an empty topic', (q) => q.push('', 1), InvalidTopicError, /Invalid topic "".*A-Z a-z 0-9/],
  ['a topic with braces', (q) => q.push('a{b}', 1), InvalidTopicError, /Invalid topic "a\{b\}"/],
  ['a topic with a space', (q) => q.push('a b', 1), InvalidTopicError, /Invalid topic/],
  ['a topic that is not a string', (q) => q.push(42 as never, 1), InvalidTopicError, /Invalid topic 42/],
  ['a topic of 201 characters', (q) => q.push('a'.repeat(201), 1), InvalidTopicError, /Invalid topic/],
  ['an undefined payload', (q, t) => q.push(t, undefined), InvalidPayloadError, /undefined: pass any JSON value/],
  [
    'a function payload',
    (q, t) => q.push(t, () => 1),
    InvalidPayloadError,
    /not JSON-serializable \(a function: the whole value\)/,
  ],
  ['a nested function', (q, t) => q.push(t, { run: () => 1 }), InvalidPayloadError, /\(a function at depth 1\)/],
  ['a BigInt', (q, t) => q.push(t, { n: 1n }), InvalidPayloadError, /not JSON-serializable.*BigInt/],
  ['a cycle', (q, t) => q.push(t, cyclic), InvalidPayloadError, /not JSON-serializable.*circular/i],
  ['NaN', (q, t) => q.push(t, { n: [NaN] }), InvalidPayloadError, /\(a number that is NaN at depth 2\)/],
  ['undefined in an object', (q, t) => q.push(t, { a: undefined }), InvalidPayloadError, /\(undefined at depth 1\)/],
  ['undefined in an array', (q, t) => q.push(t, [1, undefined]), InvalidPayloadError, /\(undefined at depth 1\)/],
  [
    'a toJSON that answers undefined',
    (q, t) => q.push(t, { toJSON: () => undefined }),
    InvalidPayloadError,
    /not JSON-serializable \(undefined\)/,
  ],
  [
    'headers over the limit with the payload',
    (q, t) => q.push(t, 'x', { headers: { big: 'y'.repeat(1_000) } }),
    PayloadTooLargeError,
    /1013 bytes with its headers, over the limit of 1000/,
  ],
  [
    'an availableAt past the Date range',
    (q, t) => q.push(t, 1, { availableAt: 1e16 }),
    InvalidOptionError,
    /Invalid availableAt 10000000000000000: expected .* from 0 to 8.64e15/,
  ],
  [
    'a delay that ends past the Date range',
    (q, t) => q.push(t, 1, { delayMs: 8.64e15 }),
    InvalidOptionError,
    /Invalid delayMs 8640000000000000: expected a delay that ends within the Date range/,
  ],
  ['a Map', (q, t) => q.push(t, { m: new Map() }), InvalidPayloadError, /\(a Map at depth 1\)/],
  [
    'a payload over the limit',
    (q, t) => q.push(t, 'x'.repeat(2_000)),
    PayloadTooLargeError,
    /2002 bytes with its headers, over the limit of 1000/,
  ],
  ['a numeric id', (q, t) => q.push(t, 1, { id: 7 as never }), InvalidMessageIdError, /Invalid message id 7/],
  ['an empty id', (q, t) => q.push(t, 1, { id: '' }), InvalidMessageIdError, /non-empty string/],
  [
    'a negative delay',
    (q, t) => q.push(t, 1, { delayMs: -1 }),
    InvalidOptionError,
    /Invalid delayMs -1: expected a finite number/,
  ],
  ['an infinite delay', (q, t) => q.push(t, 1, { delayMs: Infinity }), InvalidOptionError, /Invalid delayMs Infinity/],
  ['a NaN delay', (q, t) => q.push(t, 1, { delayMs: NaN }), InvalidOptionError, /Invalid delayMs NaN/],
  [
    'an invalid date',
    (q, t) => q.push(t, 1, { availableAt: new Date('nope') }),
    InvalidOptionError,
    /availableAt Date\(invalid\)/,
  ],
  ['zero maxAttempts', (q, t) => q.push(t, 1, { maxAttempts: 0 }), InvalidOptionError, /Invalid maxAttempts 0/],
  [
    'non-string headers',
    (q, t) => q.push(t, 1, { headers: { n: 1 } as never }),
    InvalidOptionError,
    /headers.*string values/,
  ],
  [
    'one bad item in a batch',
    (q, t) => q.pushMany(t, [{ payload: 1 }, { payload: undefined }]),
    InvalidPayloadError,
    /undefined/,
  ],
  ['a batch that is not an array', (q, t) => q.pushMany(t, {} as never), InvalidOptionError, /Invalid items/],
  [
    'a reserve count of 0',
    (q, t) => q.reserve(t, { count: 0 }),
    InvalidOptionError,
    /Invalid count 0: expected a whole number from 1 to 1000/,
  ],
  ['a fractional lease', (q, t) => q.reserve(t, { leaseMs: 1.5 }), InvalidOptionError, /Invalid leaseMs 1.5/],
  [
    'a nack with a negative delay',
    (q, t) => q.nack({ id: 'a', token: '1', topic: t, attempt: 1, maxAttempts: 1 } as never, { delayMs: -5 }),
    InvalidOptionError,
    /delayMs -5/,
  ],
  [
    'a nack delay that ends past the Date range',
    (q, t) => q.nack({ id: 'a', token: '1', topic: t, attempt: 1, maxAttempts: 1 } as never, { delayMs: 9e15 }),
    InvalidOptionError,
    /delayMs 9000000000000000/,
  ],
  [
    'an ack without a token',
    (q, t) => q.ack({ id: 'a', topic: t } as never),
    InvalidOptionError,
    /Invalid token undefined/,
  ],
  ['a dead-letter page of size 0', (q, t) => q.deadLetters(t, { limit: 0 }), InvalidOptionError, /Invalid limit 0/],
  ['requeue with a bad id', (q, t) => q.requeueDead(t, [5 as never]), InvalidMessageIdError, /Invalid message id 5/],
  [
    'a zero extension',
    (q, t) => q.extendLease({ id: 'a', token: '1', topic: t } as never, 0),
    InvalidOptionError,
    /Invalid leaseMs 0/,
  ],
  [
    'an ack of null',
    (q) => q.ack(null as never),
    InvalidOptionError,
    /Invalid message null: expected a message returned by reserve/,
  ],
  ['a nack of null', (q) => q.nack(null as never), InvalidOptionError, /Invalid message null/],
  ['a nack of undefined', (q) => q.nack(undefined as never), InvalidOptionError, /Invalid message undefined/],
  ['an extension of null', (q) => q.extendLease(null as never, 1_000), InvalidOptionError, /Invalid message null/],
  ['a release of null', (q) => q.release(null as never), InvalidOptionError, /Invalid message null/],
  [
    'an ack of a string',
    (q) => q.ack('m1' as never),
    InvalidOptionError,
    /Invalid message \(a string\): expected a message returned by reserve/,
  ],
  // consume() throws synchronously: the async wrapper turns that into the rejection every row is checked for.
  [
    'a handler that is not a function',
    // eslint-disable-next-line @typescript-eslint/require-await -- async on purpose, to reject instead of throw
    async (q, t) => q.consume(t, null as never),
    InvalidOptionError,
    /Invalid handler null/,
  ],
];

describe('bad input gets a typed error and changes nothing', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;
  let topic: string;

  beforeAll(async () => {
    // No history recorder: its flush of the counts of the pushes below may land between two snapshots.
    queue = await fx.service({ maxPayloadBytes: 1_000, maxAttempts: 3, history: false });
    topic = uniqueTopic();
    // A queue with something in every state, so "nothing changed" means something.
    await queue.pushMany(
      topic,
      [1, 2, 3, 4].map((n) => ({ id: `m${n}`, payload: n })),
    );
    await queue.push(topic, 'later', { delayMs: 600_000 });
    const [leased, dying] = await queue.reserve(topic, { count: 2, leaseMs: 600_000 });
    await queue.nack(dying, { delayMs: 0 });
    void leased;
  });

  it.each(cases)('%s', async (_name, call, type, text) => {
    const before = await snapshotTopic(fx.redis, topic);
    const failure = call(queue, topic);
    await expect(failure).rejects.toBeInstanceOf(type);
    await expect(failure).rejects.toThrow(text);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('writes nothing for an empty batch, not even the topic in the registry', async () => {
    const empty = uniqueTopic('empty');
    const registry = (await fx.redis.smembers('{ackq:}:topics')).sort();
    expect(await queue.pushMany(empty, [])).toEqual([]);
    expect(await snapshotTopic(fx.redis, empty)).toEqual({});
    expect((await fx.redis.smembers('{ackq:}:topics')).sort()).toEqual(registry);
    expect(await queue.topics()).not.toContain(empty);
  });

  it('treats null options as absent', async () => {
    const other = uniqueTopic();
    await queue.push(other, 'a', null);
    const [message] = await queue.reserve(other, null);
    expect(message).toMatchObject({ payload: 'a', attempt: 1 });
    expect(await queue.nack(message, null)).toBe('retry');
    expect(await queue.deadLetters(other, null)).toEqual([]);
    expect(await queue.requeueDead(other, null as never)).toBe(0);
  });

  type Op = 'push' | 'reserve' | 'ack';
  it.each<[string, string, Op[]]>([
    ['ready', 'list', ['push', 'reserve']],
    ['messages', 'hash', ['push', 'reserve', 'ack']],
    ['delayed', 'zset', ['push', 'reserve']],
    ['leased', 'zset', ['reserve', 'ack']],
    ['tokens', 'hash', ['reserve', 'ack']],
    ['wake', 'list', ['push', 'reserve']],
  ])('refuses to work when the %s key holds another type', async (part, expected, operations) => {
    const damaged = uniqueTopic();
    await queue.push(damaged, 'kept', { id: 'keep' });
    const key = `{ackq:${damaged}}:${part}`;
    await fx.redis.del(key);
    await fx.redis.set(key, 'foreign');
    const before = await snapshotTopic(fx.redis, damaged);
    const calls = {
      push: () => queue.push(damaged, 'new'),
      reserve: () => queue.reserve(damaged),
      ack: () => queue.ack({ id: 'keep', token: '1', topic: damaged } as never),
    };
    for (const operation of operations) {
      const failure = calls[operation]();
      await expect(failure).rejects.toBeInstanceOf(QueueKeyTypeError);
      await expect(failure).rejects.toThrow(
        new RegExp(`"${key.replace(/[{}.]/g, '\\$&')}" holds a string where the queue keeps a ${expected}`),
      );
    }
    expect(await snapshotTopic(fx.redis, damaged)).toEqual(before);
  });
});
