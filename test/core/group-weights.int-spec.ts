import { InvalidOptionError, InvalidTopicError, type RedisAckQueueService } from '../../lib';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

type Item = { group: string; n: number };

/** Handlers record the group of each start, in start order, and each group's order of n. */
class StartLog {
  readonly starts: string[] = [];
  readonly order = new Map<string, number[]>();

  record({ group, n }: Item): void {
    this.starts.push(group);
    this.order.set(group, [...(this.order.get(group) ?? []), n]);
  }
}

/** `count` messages of each group, numbered in push order (pushed interleaved: no group first). */
async function pushBacklog(queue: RedisAckQueueService, topic: string, counts: Record<string, number>): Promise<void> {
  const items: { payload: Item; group: string }[] = [];
  const most = Math.max(...Object.values(counts));
  for (let n = 0; n < most; n++) {
    for (const [group, count] of Object.entries(counts)) {
      if (n < count) items.push({ payload: { group, n }, group });
    }
  }
  await queue.pushMany(topic, items);
}

/**
 * Checks each group's starts in windows of `size` consecutive starts of `starts` (from `from`,
 * every 100, the last ending by `to`): within 5 % of its share by weight. The guarantee is
 * tighter (within 1 + (k - 2) * w / W starts of the share over any stretch: under 1.7 here) and
 * 5 % of the smallest share of a 400-start window is 2.5: the check holds on any machine.
 */
function expectShares(starts: string[], weights: Record<string, number>, from: number, to: number, size = 400): void {
  const total = Object.values(weights).reduce((sum, w) => sum + w, 0);
  expect(to - from).toBeGreaterThanOrEqual(size);
  for (let start = from; start + size <= to; start += 100) {
    const window = starts.slice(start, start + size);
    for (const [group, weight] of Object.entries(weights)) {
      const share = (size * weight) / total;
      const got = window.filter((g) => g === group).length;
      if (Math.abs(got - share) > share * 0.05) {
        throw new Error(`group ${group}: ${got} of starts ${start}-${start + size}, expected ${share} ± 5 %`);
      }
    }
  }
}

describe('weighted fair share between ordered groups', () => {
  const fx = useRedis();

  // groupConcurrency 1000: a group's slots never bind, so only the weights decide who starts next.
  // groupConcurrency 1 (ordered groups): while a group's one message runs the others must not take
  // its turns, or the shares follow the handlers' durations (and a batch reserve takes one of each).
  // c's handler, the heaviest group's, is the slowest (it yields for a timer; a's and b's do not).
  it.each([
    [1, 1000],
    [6, 1000],
    [1, 1],
    [50, 1],
  ])(
    'shares starts 1:2:5 while three groups are backlogged, each in push order (concurrency %i, groupConcurrency %i)',
    async (concurrency, groupConcurrency) => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      await queue.setGroupWeights(topic, { a: 1, b: 2, c: 5 });
      await pushBacklog(queue, topic, { a: 200, b: 400, c: 1000 });
      const log = new StartLog();
      queue.consume<Item>(
        topic,
        async (item) => {
          log.record(item);
          if (item.group === 'c') await new Promise((resolve) => setTimeout(resolve, 1));
        },
        { concurrency, groupConcurrency },
      );
      await eventually(() => log.starts.length >= 1200, 60_000);
      // Every group stays backlogged through the first 1,200 starts (a: 150, b: 300, c: 750 of them).
      expectShares(log.starts, { a: 1, b: 2, c: 5 }, 0, 1200);
      for (const [group, order] of log.order) {
        expect(order).toEqual(Array.from({ length: order.length }, (_, n) => n));
        expect(group).toMatch(/^[abc]$/);
      }
    },
  );

  it('holds the other groups back for at most a lease while a group at groupConcurrency 1 runs', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 1, b: 5 });
    await pushBacklog(queue, topic, { a: 20, b: 20 });
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const log = new StartLog();
    queue.consume<Item>(
      topic,
      async (item) => {
        log.record(item);
        if (item.group === 'b') await stuck;
      },
      { concurrency: 4, groupConcurrency: 1, leaseMs: 1_000 },
    );
    // b's first message never ends: after its lease's worth of waiting a runs on, b's turns or not.
    await eventually(() => log.order.get('a')?.length === 20, 30_000);
    expect(log.order.get('b')).toEqual([0]);
    release();
    await eventually(() => log.order.get('b')?.length === 20, 30_000);
    expect(log.order.get('b')).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('gives a group alone every start, up to the consumers and its groupConcurrency', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 1, b: 1000 });
    await pushBacklog(queue, topic, { a: 8 });
    let running = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const log = new StartLog();
    queue.consume<Item>(
      topic,
      async (item) => {
        log.record(item);
        running++;
        await gate;
        running--;
      },
      { concurrency: 4, groupConcurrency: 4 },
    );
    // The lightest group, alone, runs as many at once as the consumer and its slots allow.
    await eventually(() => running === 4);
    release();
    await eventually(() => log.starts.length === 8);
    expect(log.order.get('a')).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('keeps push order in a weighted group at groupConcurrency 1', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 7, b: 3 });
    await pushBacklog(queue, topic, { a: 60, b: 60, c: 60 });
    const log = new StartLog();
    queue.consume<Item>(topic, (item) => log.record(item), { concurrency: 8 });
    await eventually(() => log.starts.length === 180, 30_000);
    for (const group of ['a', 'b', 'c']) expect(log.order.get(group)).toEqual(Array.from({ length: 60 }, (_, n) => n));
  });

  it('uses changed weights from the next turns, without a restart', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 1, b: 2, c: 5 });
    await pushBacklog(queue, topic, { a: 1200, b: 1200, c: 1200 });
    const log = new StartLog();
    let changedAt = -1;
    queue.consume<Item>(
      topic,
      (item) => {
        log.record(item);
        if (log.starts.length === 400) {
          void queue.setGroupWeights(topic, { a: 5, b: 2, c: 1 }).then(() => (changedAt = log.starts.length));
        }
      },
      { concurrency: 1, groupConcurrency: 1000 },
    );
    await eventually(() => changedAt >= 0 && log.starts.length >= changedAt + 900, 50_000);
    expectShares(log.starts, { a: 1, b: 2, c: 5 }, 0, 400);
    // Before the new shares: the turns held at the change (one per group) and what the consumer
    // had reserved then (at most concurrency + batchSize, 51).
    expectShares(log.starts, { a: 5, b: 2, c: 1 }, changedAt + 60, changedAt + 900);
  });

  it('gives a group back from idle no credit for the turns it missed', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 1, b: 3 });
    await pushBacklog(queue, topic, { a: 1000, b: 30 });
    const log = new StartLog();
    queue.consume<Item>(
      topic,
      async (item) => {
        log.record(item);
        // b ran out long ago (after about 40 starts); it comes back after 400.
        if (log.starts.length === 400) {
          const items = Array.from({ length: 600 }, (_, n) => ({ payload: { group: 'b', n: 30 + n }, group: 'b' }));
          await queue.pushMany(topic, items);
        }
      },
      { concurrency: 1, groupConcurrency: 1000 },
    );
    await eventually(
      () => log.starts.indexOf('b', 400) > 0 && log.starts.length >= log.starts.indexOf('b', 400) + 480,
      30_000,
    );
    expect(log.starts.slice(100, 400).every((group) => group === 'a')).toBe(true);
    // From its return (after what the consumer had prefetched) b takes its share, 3:1, not a
    // run of the turns it missed.
    const back = log.starts.indexOf('b', 400);
    expectShares(log.starts, { a: 1, b: 3 }, back, back + 480);
    expect(log.order.get('b')).toEqual(Array.from({ length: log.order.get('b')!.length }, (_, n) => n));
  });

  it('reads the weights back, and null (or {}) clears them: round robin again', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    expect(await queue.groupWeights(topic)).toEqual({});
    await queue.setGroupWeights(topic, { 'tenant-a': 5, 'tenant b/é': 2 });
    expect(await queue.groupWeights(topic)).toEqual({ 'tenant-a': 5, 'tenant b/é': 2 });
    await queue.setGroupWeights(topic, { x: 3 });
    expect(await queue.groupWeights(topic)).toEqual({ x: 3 });
    await queue.setGroupWeights(topic, {});
    expect(await queue.groupWeights(topic)).toEqual({});
    await queue.setGroupWeights(topic, { a: 1, b: 2, c: 5 });
    await queue.setGroupWeights(topic, null);
    expect(await queue.groupWeights(topic)).toEqual({});

    await pushBacklog(queue, topic, { a: 300, b: 300, c: 300 });
    const log = new StartLog();
    queue.consume<Item>(topic, (item) => log.record(item), { concurrency: 1, groupConcurrency: 1000 });
    await eventually(() => log.starts.length >= 600, 30_000);
    expectShares(log.starts, { a: 1, b: 1, c: 1 }, 0, 600, 300);
  });

  it('keeps the limits set and the weights apart', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 4 });
    await queue.setLimits(topic, { groupConcurrency: 2 });
    await queue.setLimits(topic, null);
    await queue.setLimits(topic, { globalConcurrency: 3 });
    expect(await queue.limits(topic)).toEqual({ globalConcurrency: 3 });
    expect(await queue.groupWeights(topic)).toEqual({ a: 4 });
    // setLimits kept the weights working, not just stored.
    await pushBacklog(queue, topic, { a: 400, b: 400 });
    const log = new StartLog();
    queue.consume<Item>(topic, (item) => log.record(item), { concurrency: 1, groupConcurrency: 1000 });
    await eventually(() => log.starts.length >= 500, 30_000);
    expectShares(log.starts, { a: 4, b: 1 }, 0, 500);
  });

  it('writes the weights to every partition of a partitioned topic', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ topics: { [topic]: { partitions: 4 } } });
    await queue.setGroupWeights(topic, { a: 2, b: 9 });
    expect(await queue.groupWeights(topic)).toEqual({ a: 2, b: 9 });
    const snapshot = await snapshotTopic(fx.redis, topic);
    const weights = Object.entries(snapshot).filter(([key]) => key.endsWith(':group-weights'));
    expect(weights).toHaveLength(4);
    for (const [, value] of weights) expect(value).toEqual({ a: '2', b: '9' });
    await queue.setGroupWeights(topic, null);
    const cleared = await snapshotTopic(fx.redis, topic);
    expect(Object.keys(cleared).filter((key) => key.includes(':group-'))).toEqual([]);
  });

  it('refuses bad weights with a typed error and changes nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.setGroupWeights(topic, { a: 3 });
    const before = await snapshotTopic(fx.redis, topic);
    const tooMany = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`g${i}`, 1]));
    const bad: unknown[] = [
      undefined,
      [],
      'a',
      5,
      new Map([['a', 1]]),
      { a: 0 },
      { a: 1001 },
      { a: 1.5 },
      { a: -2 },
      { a: Number.NaN },
      { a: Number.POSITIVE_INFINITY },
      { a: '5' },
      { b: 2, a: null },
      { '': 1 },
      { 'a\0b': 1 },
      { [`x${'\ud800'}`]: 1 },
      { ['g'.repeat(257)]: 1 },
      tooMany,
    ];
    for (const weights of bad) {
      await expect(queue.setGroupWeights(topic, weights as Record<string, number>)).rejects.toBeInstanceOf(
        InvalidOptionError,
      );
    }
    await expect(queue.setGroupWeights('bad topic', { a: 1 })).rejects.toBeInstanceOf(InvalidTopicError);
    await expect(queue.groupWeights('bad{topic}')).rejects.toBeInstanceOf(InvalidTopicError);
    // A bad weight's error names no group.
    const error = (await queue.setGroupWeights(topic, { 'tenant-secret': 0 }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error.message).not.toContain('tenant-secret');
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    expect(await queue.groupWeights(topic)).toEqual({ a: 3 });
  });
});
