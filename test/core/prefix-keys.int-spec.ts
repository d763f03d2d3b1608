import type { Redis } from 'ioredis';
import type { RedisAckQueueService } from '../../lib';
import { captureLogs } from '../support/capture-logs';
import { isHistoryKey, singleServerOnly, useRedis } from '../support/queue-fixture';

/** Prefixes and topics may both hold ':': key names must still tell every pair apart. */
singleServerOnly('KEYS lists one server').describe('keys of a prefix with a colon', () => {
  const fx = useRedis();
  // Without the history hashes: a recorder's flush may add one between two listings.
  const keys = async () => new Set((await (fx.redis as Redis).keys('*')).filter((key) => !isHistoryKey(key)));

  it('gives prefix "p" with topic "q:t" and prefix "p:q" with topic "t" disjoint keys: neither app sees the other', async () => {
    const before = await keys();
    const a: RedisAckQueueService = await fx.service({ prefix: 'p' });
    await a.push('q:t', 'of app a', { id: 'same-id' });
    await a.upsertSchedule('q:t', 'job', { everyMs: 3_600_000 });
    const keysOfA = [...(await keys())].filter((key) => !before.has(key));
    const b: RedisAckQueueService = await fx.service({ prefix: 'p:q' });
    const pushed = await b.push('t', 'of app b', { id: 'same-id' });
    await b.upsertSchedule('t', 'job', { everyMs: 3_600_000 });
    expect(pushed.duplicate).toBe(false);
    const keysOfB = [...(await keys())].filter((key) => !before.has(key) && !keysOfA.includes(key));
    expect(keysOfB.length).toBeGreaterThan(0);
    // Every key of b is new: none of a's was touched (their contents below) and b's all sit under the escaped prefix.
    for (const key of keysOfB) expect(key.startsWith('{p%3Aq:')).toBe(true);
    for (const key of keysOfA) expect(key.startsWith('{p:')).toBe(true);
    expect((await b.reserve('t')).map((m) => m.payload)).toEqual(['of app b']);
    expect((await a.reserve('q:t')).map((m) => m.payload)).toEqual(['of app a']);
    expect(await a.topics()).toEqual(['q:t']);
    expect(await b.topics()).toEqual(['t']);
    expect((await b.schedules()).map((s) => s.topic)).toEqual(['t']);
  });

  it('keeps the key layout of a prefix without a colon', async () => {
    const plain = await fx.service({ prefix: 'plain' });
    await plain.push('orders', 1);
    expect(await fx.redis.exists('{plain:orders}:messages', '{plain:}:topics')).toBe(2);
  });

  it('warns once at connect when the layout of earlier versions holds keys of its prefix', async () => {
    await fx.redis.sadd('{old:app:}:topics', 'orders');
    const logs = captureLogs();
    try {
      await fx.service({ prefix: 'old:app' });
      await fx.service({ prefix: 'other:app' });
      const warnings = logs.lines.filter((line) => /drain those queues/.test(line));
      expect(warnings).toEqual([expect.stringMatching(/^warn .*prefix "old:app".*drain those queues/)]);
    } finally {
      logs.restore();
    }
  });
});
