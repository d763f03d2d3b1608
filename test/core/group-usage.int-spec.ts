import { InvalidOptionError, InvalidTopicError, MessageRejectedError } from '../../lib';
import type { GroupUsage, GroupUsageCounts } from '../../lib';
import { GroupTally } from '../../lib/engine/codecs/group-usage-format';
import { HISTORY_SLOTS, MinuteRecord } from '../../lib/engine/codecs/history-format';
import { ScriptRunner } from '../../lib/engine/scripts/script-runner';
import { TopicLayouts } from '../../lib/engine/scripts/topic-layouts';
import { HistoryStore } from '../../lib/engine/stores/history-store';
import { ConsumerProcesses } from '../support/consumer-processes';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const NUL = '\0';
type Counts = Omit<GroupUsageCounts, 'handlerMs'>;
const ZERO: Counts = { handled: 0, failed: 0, retried: 0, dead: 0 };
const countsOf = ({ handled, failed, retried, dead }: GroupUsageCounts): Counts => ({ handled, failed, retried, dead });

/** Each group's counts summed over its minutes: they must equal its totals. */
function minuteSums(usage: GroupUsage): Record<string, GroupUsageCounts> {
  const sums: Record<string, GroupUsageCounts> = {};
  for (const row of usage.groups) {
    const sum = { ...ZERO, handlerMs: 0 };
    for (const minute of row.minutes) {
      for (const name of ['handled', 'failed', 'retried', 'dead', 'handlerMs'] as const) sum[name] += minute[name];
      expect(minute.at % 60_000).toBe(0);
    }
    sums[row.group] = sum;
  }
  return sums;
}

/**
 * queue.groupUsage(): each process counts its grouped deliveries per group and minute, and adds
 * them to the topic's usage ring in the same history-record.lua call as its history (once a second,
 * and at close). Closing the processes that counted makes the counts final, so nothing here waits
 * on the flush timer.
 */
describe('group usage', () => {
  const fx = useRedis();

  it('counts what the handlers of two processes did per group: handled, retried, dead and handler time', async () => {
    const topic = uniqueTopic('usage');
    const handlerMs = 20;
    const processes = new ConsumerProcesses({
      ...fx.consumerEnv,
      TOPIC: topic,
      MAX_ATTEMPTS: '2',
      HANDLER_MS: String(handlerMs),
      CONCURRENCY: '4',
    });
    try {
      const children = [await processes.start(), await processes.start()];
      const producer = await fx.service({ logLevel: 'silent' });
      const messages = Array.from({ length: 120 }, (_, i) => ({
        id: `m-${i}`,
        group: `tenant-${i % 12}`,
        // Some fail every time: a retry, then the dead letters (maxAttempts 2).
        payload: { fail: i % 12 < 3 && i % 5 === 0 },
      }));
      const ungrouped = Array.from({ length: 10 }, (_, i) => ({ id: `plain-${i}`, payload: { fail: i === 0 } }));
      await producer.pushMany(topic, [...messages, ...ungrouped]);
      const ids = [...messages, ...ungrouped].map((m) => m.id);
      const ended = (id: string) =>
        processes.events.some((e) => e.id === id && (e.type === 'acked' || e.type === 'dead'));
      await processes.waitFor(() => ids.every(ended), 60_000, 'every message acked or dead');
      // SIGTERM: each process closes its consumers and its service, which sends what it counted.
      await Promise.all(children.map((child) => processes.kill(child, 'SIGTERM')));

      // What the handlers saw, per group: the group of each id from its start lines, then its ends.
      const groupOf = new Map<string, string>();
      for (const { id, group } of processes.of('start')) if (id && group) groupOf.set(id, group);
      const expected: Record<string, Counts> = {};
      const deliveries: Record<string, number> = {};
      for (const event of processes.events) {
        const group = event.id && groupOf.get(event.id);
        if (!group) continue;
        const counts = (expected[group] ??= { ...ZERO });
        if (event.type === 'start') deliveries[group] = (deliveries[group] ?? 0) + 1;
        if (event.type === 'acked') counts.handled++;
        if (event.type === 'retried') counts.retried++;
        if (event.type === 'dead') counts.dead++;
        if (event.type === 'retried' || event.type === 'dead') counts.failed++;
      }
      expect(Object.keys(expected)).toHaveLength(12);
      expect(Object.values(expected).reduce((sum, c) => sum + c.dead, 0)).toBeGreaterThan(0);
      // Both processes handled some.
      expect(new Set(processes.of('start').map((e) => e.pid)).size).toBe(2);

      const usage = await producer.groupUsage(topic, { top: 1_000 });
      expect(usage.groupCount).toBe(12);
      const answered = Object.fromEntries(usage.groups.map((row) => [row.group, countsOf(row)]));
      expect(answered).toEqual(expected);
      const sums = minuteSums(usage);
      for (const row of usage.groups) {
        expect(countsOf(sums[row.group])).toEqual(countsOf(row));
        expect(sums[row.group].handlerMs).toBe(row.handlerMs);
        // Every delivery ran its handler at least handlerMs (whole ms, rounded per flush).
        expect(row.handlerMs).toBeGreaterThanOrEqual(deliveries[row.group] * (handlerMs - 1));
      }
      // Most handler time first, ties by name.
      const order = [...usage.groups].sort((a, b) => b.handlerMs - a.handlerMs || (a.group < b.group ? -1 : 1));
      expect(usage.groups.map((row) => row.group)).toEqual(order.map((row) => row.group));
      const top3 = await producer.groupUsage(topic, { top: 3 });
      expect(top3.groupCount).toBe(12);
      expect(top3.groups).toEqual(usage.groups.slice(0, 3));
      expect((await producer.groupUsage(topic)).groups).toHaveLength(10);
    } finally {
      await processes.stopAll();
    }
  }, 90_000);

  it('counts deliveries by hand (reserve, ack, nack) and a rejection, and no ungrouped message per group', async () => {
    const topic = uniqueTopic('usage-hand');
    const queue = await fx.service({ logLevel: 'silent' });
    await queue.pushMany(topic, [
      { id: 'a', payload: 1, group: 'g1' },
      { id: 'b', payload: 2, group: 'g2', maxAttempts: 1 },
      { id: 'c', payload: 3 },
    ]);
    const reserved = await queue.reserve(topic, { count: 3 });
    const byId = new Map(reserved.map((m) => [m.id, m]));
    await queue.ack(byId.get('a')!);
    await queue.nack(byId.get('b')!, { delayMs: 0 });
    await queue.ack(byId.get('c')!);
    await queue.push(topic, { reject: true }, { id: 'r', group: 'g1' });
    const consumer = queue.consume(topic, () => {
      throw new MessageRejectedError('not for us');
    });
    await queue.waitUntilIdle(topic);
    await consumer.close();
    await queue.close();

    const reader = await fx.service();
    const usage = await reader.groupUsage(topic);
    expect(usage.groupCount).toBe(2);
    expect(
      usage.groups.map((row) => ({ group: row.group, ...countsOf(row) })).sort((a, b) => (a.group < b.group ? -1 : 1)),
    ).toEqual([
      { group: 'g1', handled: 1, failed: 1, retried: 0, dead: 1 },
      { group: 'g2', handled: 0, failed: 1, retried: 0, dead: 1 },
    ]);
    // The history counted the ungrouped one; usage per group did not.
    const history = await reader.history(topic);
    expect(history.points.reduce((sum, p) => sum + p.acked, 0)).toBe(2);
  });

  it('answers no groups for a topic without usage, nor for one of ungrouped messages only', async () => {
    const topic = uniqueTopic('usage-plain');
    const queue = await fx.service({ logLevel: 'silent' });
    await queue.pushMany(
      topic,
      Array.from({ length: 20 }, (_, i) => ({ payload: i })),
    );
    const consumer = queue.consume(topic, () => undefined);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    await queue.close();
    const reader = await fx.service();
    for (const name of [topic, uniqueTopic('quiet')]) {
      const usage = await reader.groupUsage(name, { lastMs: 25 * 3_600_000, top: 1_000 });
      expect(usage).toMatchObject({ topic: name, groupCount: 0, groups: [] });
      expect(usage.to - usage.from).toBeGreaterThan(24 * 3_600_000);
    }
    expect(await fx.redis.exists(`{ackq:${topic}}:group-usage`)).toBe(0);
  });

  it('refuses bad input with a typed error', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic('bad');
    const bad: unknown[] = [
      { from: -1 },
      { from: 1.5 },
      { to: Number.NaN },
      { from: '2026-01-01' },
      { from: 2_000_000, to: 1_000_000 },
      { lastMs: 59_999 },
      { lastMs: 26 * 3_600_000 },
      { lastMs: '1h' },
      { from: 1_000_000, lastMs: 3_600_000 },
      { top: 0 },
      { top: 1_001 },
      { top: 2.5 },
      { top: '10' },
      42,
      'top',
    ];
    for (const options of bad)
      await expect(queue.groupUsage(topic, options as never)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(queue.groupUsage('no spaces')).rejects.toBeInstanceOf(InvalidTopicError);
  });

  describe('the stored ring', () => {
    /** The topic's history store on a client of the test's own: minutes written as processes write them. */
    function storeOf(): HistoryStore {
      const client = fx.client();
      return new HistoryStore(new ScriptRunner(client), new TopicLayouts(client, 'ackq', new Map()));
    }
    /** A minute's record with `groups` groups that each acked `handled` in `ms` of handler time. */
    function minuteOf(minute: number, groups: number, handled = 60, ms = 3_000): MinuteRecord {
      const record = new MinuteRecord(minute);
      record.groups = new Map();
      for (let g = 0; g < groups; g++) {
        const tally = new GroupTally();
        tally.handled = handled;
        tally.handlerMs = ms;
        record.groups.set(`tenant-${String(g).padStart(4, '0')}`, tally);
      }
      return record;
    }
    const serverMinute = async () => {
      const [seconds] = await fx.redis.time();
      return Math.floor(Number(seconds) / 60);
    };

    it('never holds more than its slots, and merges a minute by group without growing it', async () => {
      const topic = uniqueTopic('ring');
      const store = storeOf();
      const key = `{ackq:${topic}}:group-usage`;
      const now = await serverMinute();
      // Every minute the script takes (now - 1499 to now + 1) and some it drops, oldest first.
      for (let start = now - 1_600; start <= now + 5; start += 100) {
        const minutes = Array.from({ length: 100 }, (_, i) => start + i).filter((m) => m <= now + 5);
        await store.record(
          topic,
          minutes.map((minute) => minuteOf(minute, 3)),
        );
      }
      // The slots, and the list of open minutes (the one counting now and the next).
      expect(await fx.redis.hlen(key)).toBeLessThanOrEqual(HISTORY_SLOTS + 1);
      expect(await fx.redis.pttl(key)).toBeGreaterThan(0);
      // A minute that ended, sent again by two late flushes: merged by group in its slot.
      const late = now - 10;
      const field = String(late % HISTORY_SLOTS);
      const before = await fx.redis.hget(key, field);
      await store.record(topic, [minuteOf(late, 3, 1, 0)]);
      await store.record(topic, [minuteOf(late, 3, 1, 0)]);
      const after = (await fx.redis.hget(key, field))!;
      expect(after.split(NUL).length).toBe(before!.split(NUL).length);
      expect(after).toBe(`${late}${['0000', '0001', '0002'].map((g) => `${NUL}tenant-${g}${NUL}62,3000`).join('')}`);
      const usage = await (await fx.service()).groupUsage(topic, { lastMs: 25 * 3_600_000, top: 1_000 });
      expect(usage.groupCount).toBe(3);
      expect(usage.groups[0].minutes.length).toBeLessThanOrEqual(HISTORY_SLOTS);
      // The open minute is read from its own hash: 60 handled by each group.
      expect(usage.groups[0].minutes.find((m) => m.at === now * 60_000)).toMatchObject({ handled: 60 });
    }, 60_000);

    it('counts the last two minutes in hashes of their own, and seals one into its slot once it is older', async () => {
      const topic = uniqueTopic('seal');
      const store = storeOf();
      const key = `{ackq:${topic}}:group-usage`;
      const now = await serverMinute();
      // The minute before now: still open (every process sends a minute's last second after it ended).
      const before = now - 1;
      await store.record(topic, [minuteOf(before, 2, 5, 100)]);
      await store.record(topic, [minuteOf(before, 3, 1, 10)]);
      const open = `${key}:${before}`;
      if ((await serverMinute()) === now) {
        expect(await fx.redis.hgetall(open)).toEqual({
          'tenant-0000': '6,110',
          'tenant-0001': '6,110',
          'tenant-0002': '1,10',
        });
        expect(await fx.redis.hget(key, 'open')).toBe(String(before));
      }
      // Once the server's minute turned, the next flush (of anything) seals it.
      await eventually(async () => (await serverMinute()) > now, 90_000, 500);
      await store.record(topic, [new MinuteRecord(now + 1)]);
      expect(await fx.redis.exists(open)).toBe(0);
      expect(await fx.redis.hget(key, 'open')).toBeNull();
      expect((await fx.redis.hget(key, String(before % HISTORY_SLOTS)))!.split(NUL).slice(1)).toEqual([
        'tenant-0000',
        '6,110',
        'tenant-0001',
        '6,110',
        'tenant-0002',
        '1,10',
      ]);
      const usage = await (await fx.service()).groupUsage(topic);
      expect(usage.groups.map((row) => [row.group, row.handled, row.handlerMs])).toEqual([
        ['tenant-0000', 6, 110],
        ['tenant-0001', 6, 110],
        ['tenant-0002', 1, 10],
      ]);
    }, 120_000);

    it('keeps a day of 1,000 groups active every minute within the bytes its format takes', async () => {
      const topic = uniqueTopic('day');
      const store = storeOf();
      const key = `{ackq:${topic}}:group-usage`;
      const now = await serverMinute();
      for (let hour = 0; hour < 24; hour++)
        await store.record(
          topic,
          Array.from({ length: 60 }, (_, i) => minuteOf(now - 1_441 + hour * 60 + i, 1_000)),
        );
      expect(await fx.redis.hlen(key)).toBe(1_440);
      // Per group and minute: '\0' + 'tenant-0000' + '\0' + '60,3000' = 20 bytes; per minute its
      // number (8). Redis adds a field's header and its allocator's rounding: within 10 %.
      const formatBytes = 1_440 * (1_000 * 20 + 8);
      const used = Number(await fx.redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      expect(used).toBeGreaterThan(formatBytes);
      expect(used).toBeLessThan(formatBytes * 1.1);
      // The day ends a minute before now (the minute counting now is not part of it).
      const usage = await (await fx.service()).groupUsage(topic, { lastMs: 25 * 3_600_000 });
      expect(usage.groupCount).toBe(1_000);
      expect(usage.groups).toHaveLength(10);
      expect(usage.groups[0]).toMatchObject({ group: 'tenant-0000', handled: 1_440 * 60, handlerMs: 1_440 * 3_000 });
      expect(usage.groups[0].minutes).toHaveLength(1_440);
    }, 120_000);
  });
});
