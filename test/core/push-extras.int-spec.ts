import { InvalidOptionError, type RedisAckQueueService } from '../../lib';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * What push stores for start-by deadlines and tags (push.lua, push-keyed.lua, prelude-extras.lua)
 * and what ends with the message (prelude-end.lua), against real Redis: the keys themselves, and
 * bad input refused with nothing changed.
 */
describe('push: deadlines and tags stored', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;
  beforeAll(async () => {
    queue = await fx.service();
  });

  /** The topic's keys of deadlines and tags, by their suffix (`deadlines`, `expiring`, `tags`, `tag:<tag>`). */
  const extrasOf = async (topic: string) => {
    const snapshot = await snapshotTopic(fx.redis, topic);
    const found: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(snapshot)) {
      const suffix = /^\{[^}]+\}:(deadlines|expiring|tags|tag:.*)$/.exec(key)?.[1];
      if (suffix) found[suffix] = value;
    }
    return found;
  };
  const serverMs = async () => {
    const [s, us] = await fx.redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };

  it('stores a deadline by the server clock and each tag once, and a duplicate writes nothing', async () => {
    const topic = uniqueTopic('extras');
    const before = await serverMs();
    await queue.push(topic, { n: 1 }, { id: 'a', expiresInMs: 60_000, tags: ['tenant:42', 'spring', 'tenant:42'] });
    await queue.push(topic, { n: 2 }, { id: 'b', delayMs: 10_000, expiresInMs: 5_000, onExpire: 'drop' });
    const startBy = before + 3_600_000;
    await queue.push(topic, { n: 3 }, { id: 'c', startBy: new Date(startBy), priority: 3, tags: ['spring'] });
    const after = await serverMs();
    const found = await extrasOf(topic);
    const deadlines = found.deadlines as Record<string, string>;
    expect(Number(deadlines.a)).toBeGreaterThanOrEqual(before + 60_000);
    expect(Number(deadlines.a)).toBeLessThanOrEqual(after + 60_000);
    // A delayed message's window starts at its due time.
    expect(deadlines.b).toMatch(/^\d+:drop$/);
    expect(Number(deadlines.b.split(':')[0])).toBeGreaterThanOrEqual(before + 15_000);
    expect(deadlines.c).toBe(String(startBy));
    expect((found.expiring as string[]).filter((_, i) => i % 2 === 0).sort()).toEqual(['a', 'b', 'c']);
    expect(found.tags).toEqual({ a: 'tenant:42\0spring', c: 'spring' });
    expect((found['tag:tenant:42'] as string[])[0]).toBe('a');
    expect((found['tag:spring'] as string[]).filter((_, i) => i % 2 === 0).sort()).toEqual(['a', 'c']);

    const again = await queue.push(topic, { n: 9 }, { id: 'a', expiresInMs: 1, tags: ['other'] });
    expect(again.duplicate).toBe(true);
    expect(await extrasOf(topic)).toEqual(found);
  });

  it('refuses bad deadlines and tags with InvalidOptionError, never quoting a tag, and changes nothing', async () => {
    const topic = uniqueTopic('extras-bad');
    await queue.push(topic, 'x', { id: 'kept', tags: ['t'] });
    const before = await snapshotTopic(fx.redis, topic);
    const secret = 'tenant:secret-7731';
    const now = await serverMs();
    const bad: [string, object][] = [
      ['tags', { tags: Array.from({ length: 11 }, (_, i) => `${secret}-${i}`) }],
      ['tags', { tags: ['x'.repeat(1024 * 1024)] }],
      ['tags', { tags: [`${secret}\n`] }],
      ['tags', { tags: [''] }],
      ['tags', { tags: secret }],
      ['tags', { tags: [secret, 42] }],
      ['startBy', { startBy: now - 60_000, tags: [secret] }],
      ['startBy', { startBy: 8.64e15 + 1 }],
      ['startBy', { startBy: new Date(NaN) }],
      ['startBy', { startBy: now + 5_000, delayMs: 10_000 }],
      ['expiresInMs', { startBy: now + 60_000, expiresInMs: 1_000 }],
      ['expiresInMs', { expiresInMs: 0 }],
      ['expiresInMs', { expiresInMs: -5 }],
      ['expiresInMs', { expiresInMs: 1.5 }],
      ['expiresInMs', { expiresInMs: 8.64e15, availableAt: 8.64e15 - 10 }],
      ['onExpire', { onExpire: 'drop' }],
      ['onExpire', { expiresInMs: 1_000, onExpire: 'later' }],
    ];
    for (const [option, options] of bad) {
      // One good message beside the bad one: the whole call is refused.
      const error = await queue
        .pushMany(topic, [
          { payload: 1, id: 'good', tags: ['t'] },
          { payload: 2, ...options },
        ])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe(option);
      expect((error as Error).message).not.toContain('secret');
      expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    }
    // A keyed push is judged the same way, by the server's clock.
    const keyed = await queue
      .push(topic, 1, { debounce: { key: 'k', delayMs: 10_000 }, startBy: now + 1_000 })
      .catch((e: unknown) => e);
    expect(keyed).toBeInstanceOf(InvalidOptionError);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('ends a message with its deadline and tags; a dead letter keeps its tags, not its deadline', async () => {
    const topic = uniqueTopic('extras-end');
    const tags = ['a', 'b'];
    await queue.push(topic, 1, { id: 'acked', tags, expiresInMs: 60_000 });
    await queue.push(topic, 2, { id: 'cancelled', tags, expiresInMs: 60_000 });
    await queue.push(topic, 3, { id: 'dead', tags, expiresInMs: 60_000, maxAttempts: 1 });
    await queue.cancel(topic, 'cancelled');
    const leased = await queue.reserve(topic, { count: 2 });
    expect(leased.map((m) => m.id).sort()).toEqual(['acked', 'dead']);
    for (const message of leased) {
      if (message.id === 'acked') await queue.ack(message);
      else await queue.nack(message, { error: 'boom' });
    }
    const found = await extrasOf(topic);
    expect(found.deadlines).toBeUndefined();
    expect(found.expiring).toBeUndefined();
    expect(found.tags).toEqual({ dead: 'a\0b' });
    expect(found['tag:a']).toEqual(['dead', expect.any(String)]);
    await queue.purgeDead(topic);
    expect(await extrasOf(topic)).toEqual({});
  });

  it("gives a debounced message the latest push's tags and a deadline counted from its new due time", async () => {
    const topic = uniqueTopic('extras-keyed');
    const first = await queue.push(topic, 1, {
      debounce: { key: 'k', delayMs: 10_000 },
      tags: ['old'],
      expiresInMs: 1_000,
    });
    const before = await serverMs();
    const second = await queue.push(topic, 2, {
      debounce: { key: 'k', delayMs: 20_000 },
      tags: ['new'],
      expiresInMs: 1_000,
    });
    expect(second).toEqual({ id: first.id, debounced: true });
    const found = await extrasOf(topic);
    expect(found.tags).toEqual({ [first.id]: 'new' });
    expect(found['tag:old']).toBeUndefined();
    expect(Number((found.deadlines as Record<string, string>)[first.id])).toBeGreaterThanOrEqual(before + 21_000);
  });
});
