import { InvalidOptionError, type MessageContext } from '../../lib';
import { eventually, type TestClient, uniqueTopic, useRedis } from '../support/queue-fixture';
import { withDelayOutlasting } from '../support/waits';

type Item = { group: string; n: number };

/** Records, per group, the order handlers started in and how many ran at once. */
class GroupLog {
  readonly order = new Map<string, number[]>();
  readonly running = new Map<string, number>();
  maxRunning = 0;
  readonly starts: string[] = [];

  async handle({ group, n }: Item, hold: () => Promise<unknown>): Promise<void> {
    this.starts.push(group);
    this.order.set(group, [...(this.order.get(group) ?? []), n]);
    const now = (this.running.get(group) ?? 0) + 1;
    this.running.set(group, now);
    this.maxRunning = Math.max(this.maxRunning, now);
    try {
      await hold();
    } finally {
      this.running.set(group, this.running.get(group)! - 1);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('ordered groups', () => {
  const fx = useRedis();

  it('handles the messages of a group one at a time, in push order, groups in parallel', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const groups = ['a', 'b', 'c', 'd'];
    const items = Array.from({ length: 30 }, (_, n) => groups.map((group) => ({ payload: { group, n }, group })));
    await queue.pushMany(topic, items.flat());
    const log = new GroupLog();
    queue.consume<Item>(topic, (item) => log.handle(item, () => sleep(Math.random() * 3)), { concurrency: 8 });
    await eventually(() => log.starts.length === 120 && [...log.running.values()].every((n) => n === 0));
    for (const group of groups) expect(log.order.get(group)).toEqual(Array.from({ length: 30 }, (_, n) => n));
    expect(log.maxRunning).toBe(1);
    // The last acks may still be on their way when the last handler returns.
    await queue.waitUntilIdle(topic);
    expect(log.starts).toHaveLength(120);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 0, delayed: 0 });
  });

  it('keeps a failed message at the head of its group through its backoff', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      [1, 2, 3].map((n) => ({ payload: { group: 'g', n }, group: 'g' })),
    );
    const seen: string[] = [];
    queue.consume<Item>(
      topic,
      ({ n }, context: MessageContext) => {
        seen.push(`${n}.${context.attempt}`);
        if (n === 1 && context.attempt < 3) throw new Error('not yet');
      },
      { backoff: { type: 'fixed', delayMs: 50 }, concurrency: 4 },
    );
    await eventually(() => seen.length === 5);
    expect(seen).toEqual(['1.1', '1.2', '1.3', '2.1', '3.1']);
  });

  it('moves on once the head of a group is dead, and a cancelled head frees its group', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      [1, 2, 3].map((n) => ({ payload: { n }, group: 'g', id: `m${n}`, maxAttempts: 1 })),
    );
    const [first] = await queue.reserve(topic, { count: 10 });
    expect(first.id).toBe('m1');
    expect(first.group).toBe('g');
    expect(await queue.reserve(topic, { count: 10 })).toEqual([]);
    expect(await queue.nack(first, { delayMs: 0 })).toBe('dead');
    const [second] = await queue.reserve(topic, { count: 10 });
    expect(second.id).toBe('m2');
    expect(await queue.cancel(topic, 'm2')).toBe('leased');
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['m3']);
  });

  it('serves groups in turn: a deep group does not starve the others, nor ungrouped messages', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 50 }, (_, n) => ({ payload: { group: 'deep', n }, group: 'deep' })),
    );
    await queue.pushMany(topic, [
      ...['x', 'y', 'z'].map((group) => ({ payload: { group, n: 0 }, group })),
      { payload: { group: '-', n: 0 } },
    ]);
    const log = new GroupLog();
    queue.consume<Item>(topic, (item) => log.handle(item, () => sleep(1)), { concurrency: 1 });
    await eventually(() => log.starts.length === 54);
    // Within the first few turns every group and the ungrouped message had its go.
    const firstOf = (group: string) => log.starts.indexOf(group);
    for (const group of ['x', 'y', 'z', '-']) expect(firstOf(group)).toBeLessThan(10);
  });

  it('serves groups and ungrouped messages in turn to a consumer reserving one at a time', async () => {
    // A loaded consumer prefetches nothing and reserves one message per call: the odd place of
    // each call must go to both kinds in turn, or the deep group starves the ungrouped message.
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, n) => ({ payload: { group: 'deep', n }, group: 'deep' })),
    );
    await queue.pushMany(topic, [
      ...['x', 'y', 'z'].map((group) => ({ payload: { group, n: 0 }, group })),
      { payload: { group: '-', n: 0 } },
    ]);
    const starts: string[] = [];
    for (let n = 0; n < 5; n++) {
      const [message] = await queue.reserve<Item>(topic, { count: 1 });
      starts.push(message.payload.group);
      await queue.ack(message);
    }
    // Five turns: deep's first message and one of each of the others.
    expect(starts.slice(0, 5).sort()).toEqual(['-', 'deep', 'x', 'y', 'z']);
  });

  it('allows groupConcurrency messages of a group at once', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 20 }, (_, n) => ({ payload: { group: 'g', n }, group: 'g' })),
    );
    const log = new GroupLog();
    queue.consume<Item>(topic, (item) => log.handle(item, () => sleep(10)), { concurrency: 10, groupConcurrency: 3 });
    await eventually(() => log.starts.length === 20 && log.running.get('g') === 0);
    expect(log.maxRunning).toBe(3);
    expect(await queue.limits(topic)).toEqual({ groupConcurrency: 3 });
  });

  it('joins a delayed grouped message to its group once due, and counts waiting ones as ready', async () => {
    const queue = await fx.service();
    // Its first steps must come before 'later' is due, or 'later' would rightly head the group.
    await withDelayOutlasting(150, async (delayMs) => {
      const topic = uniqueTopic();
      const pushedAt = await serverNow(fx.redis);
      await queue.pushMany(topic, [
        { payload: 'later', group: 'g', delayMs, id: 'later' },
        { payload: 'now', group: 'g', id: 'now' },
        { payload: 'next', group: 'g', id: 'next' },
      ]);
      const stats = await queue.stats(topic);
      const [now] = await queue.reserve(topic, { count: 5 });
      if ((await serverNow(fx.redis)) - pushedAt >= delayMs) return false;
      expect(stats).toMatchObject({ ready: 2, delayed: 1 });
      expect((await queue.get(topic, 'next'))?.group).toBe('g');
      expect(now.id).toBe('now');
      await queue.ack(now);
      // Pushed before 'next', 'later' joins ahead of it once due.
      await eventually(async () => (await queue.stats(topic)).delayed === 0);
      const [later] = await queue.reserve(topic, { count: 5 });
      expect(later.id).toBe('later');
      return true;
    });
  });

  it('refuses a bad group, or a group with a priority, changing nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    for (const group of ['', 'x'.repeat(257), 'a\0b', 7]) {
      await expect(queue.push(topic, 'x', { group: group as string })).rejects.toThrow(InvalidOptionError);
    }
    await expect(queue.push(topic, 'x', { group: 'g', priority: 3 })).rejects.toThrow(InvalidOptionError);
    await expect(queue.pushMany(topic, [{ payload: 1 }, { payload: 2, group: '' }])).rejects.toThrow(/group/);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('keeps order per group on a partitioned topic, and finds grouped messages by id', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ topics: { [topic]: { partitions: 4 } } });
    const groups = ['a', 'b', 'c', 'd', 'e', 'f'];
    await queue.pushMany(
      topic,
      Array.from({ length: 15 }, (_, n) =>
        groups.map((group) => ({ payload: { group, n }, group, id: `${group}${n}` })),
      ).flat(),
    );
    expect((await queue.get(topic, 'f14'))?.state).toBe('ready');
    const log = new GroupLog();
    queue.consume<Item>(topic, (item) => log.handle(item, () => sleep(Math.random() * 2)), { concurrency: 6 });
    await eventually(() => log.starts.length === 90);
    for (const group of groups) expect(log.order.get(group)).toEqual(Array.from({ length: 15 }, (_, n) => n));
    expect(log.maxRunning).toBe(1);
  });
});
