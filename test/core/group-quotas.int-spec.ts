import { monitorEventLoopDelay } from 'node:perf_hooks';
import { InvalidOptionError, InvalidTopicError, type GroupQuotas, type RedisAckQueueService } from '../../lib';
import { ConsumerProcesses, type ConsumerEvent } from '../support/consumer-processes';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';
import { dispatchAllowanceMs, leastSpanMs, maxStartsInAnyInterval } from '../support/start-times';

/** A quota's window on the server clock: perMs plus the dispatch allowance (as groupRateLimit's). */
const spanOf = (perMs: number) => perMs + dispatchAllowanceMs(perMs);

/** `counts[group]` messages of each group, pushed interleaved (no group first), payload { group, n }. */
async function pushGroups(queue: RedisAckQueueService, topic: string, counts: Map<string, number>): Promise<number> {
  const items: { payload: { group: string; n: number }; group: string }[] = [];
  const most = Math.max(...counts.values());
  for (let n = 0; n < most; n++) {
    for (const [group, count] of counts) if (n < count) items.push({ payload: { group, n }, group });
  }
  await queue.pushMany(topic, items);
  return items.length;
}

/**
 * Each group's first-delivery starts on the server clock, from consumer processes' lines: a
 * start's `enqueuedAt` plus its ack's `waitMs` (test/support/start-times.ts).
 */
function serverStartsByGroup(events: readonly ConsumerEvent[]): Map<string, number[]> {
  const started = new Map<string, { group: string; enqueuedAt: number }>();
  for (const event of events) {
    if (event.type === 'start' && event.attempt === 1 && event.group !== undefined) {
      started.set(event.id!, { group: event.group, enqueuedAt: event.enqueuedAt! });
    }
  }
  const byGroup = new Map<string, number[]>();
  for (const event of events) {
    const start = event.type === 'acked' && event.attempt === 1 ? started.get(event.id!) : undefined;
    if (!start) continue;
    byGroup.set(start.group, [...(byGroup.get(start.group) ?? []), start.enqueuedAt + event.waitMs!]);
  }
  return byGroup;
}

/** What an in-process run saw of one topic: each first delivery's server start, its group, and how long its handler ran. */
interface LocalRun {
  starts: number[];
  groups: string[];
  loopDelayMs: number;
}

/** Consumes `topic` with `services` (each handler sleeping `handlerMs`) until `count` first deliveries were acked. */
async function localRun(
  services: RedisAckQueueService[],
  topic: string,
  count: number,
  handlerMs: number,
): Promise<LocalRun> {
  const run: LocalRun = { starts: [], groups: [], loopDelayMs: 0 };
  const seen = new Map<string, { enqueuedAt: number; group: string }>();
  const subscriptions = services.map((service) =>
    service.events$.subscribe((event) => {
      const start = event.type === 'acked' && event.topic === topic ? seen.get(event.id!) : undefined;
      if (!start) return;
      run.starts.push(start.enqueuedAt + event.waitMs!);
      run.groups.push(start.group);
    }),
  );
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  for (const service of services) {
    service.consume(
      topic,
      async (_payload, context) => {
        seen.set(context.id, { enqueuedAt: context.enqueuedAt, group: context.group! });
        if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
      },
      { concurrency: 4 },
    );
  }
  await services[0].resume(topic);
  await eventually(() => run.starts.length === count, 120_000);
  loop.disable();
  subscriptions.forEach((subscription) => subscription.unsubscribe());
  await Promise.all(services.map((service) => service.close()));
  run.loopDelayMs = loop.max / 1e6;
  return run;
}

describe('group quotas: a rate and a handler-time budget per ordered group, across processes', () => {
  const fx = useRedis();
  /** The topic's keys that hold anything of quotas (the limits hash holds their mark). */
  const quotaKeys = async (topic: string) =>
    Object.keys(await snapshotTopic(fx.redis, topic)).filter((key) => /:(quota-|group-quotas|limits)/.test(key));

  it("4 processes, 1,000 weighted groups: each group's starts stay within its quota in every window, to the message", async () => {
    const topic = uniqueTopic('quota');
    const queue = await fx.service();
    const perMs = 1_500;
    const weightOf = (i: number) => 1 + (i % 5);
    await queue.setGroupWeights(
      topic,
      Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`g${i}`, weightOf(i)])),
    );
    await queue.setGroupQuotas(topic, { default: { max: 1, perMs, scaleByWeight: true } });
    // Even groups have two windows' worth and one more (they wait twice); odd ones exactly their quota.
    const counts = new Map(
      Array.from({ length: 1_000 }, (_, i) => [`g${i}`, i % 2 === 0 ? 2 * weightOf(i) + 1 : weightOf(i)]),
    );
    const processes = new ConsumerProcesses({
      ...fx.consumerEnv,
      TOPIC: topic,
      HANDLER_MS: '0',
      CONCURRENCY: '16',
      LEASE_MS: '60000',
    });
    try {
      await queue.pause(topic);
      const total = await pushGroups(queue, topic, counts);
      await Promise.all(Array.from({ length: 4 }, () => processes.start()));
      await queue.resume(topic);
      await processes.waitForAcks('', total, 240_000);
      const byGroup = serverStartsByGroup(processes.events);
      expect(new Set(processes.of('start').map((event) => event.pid)).size).toBe(4);
      for (let i = 0; i < 1_000; i++) {
        const starts = byGroup.get(`g${i}`) ?? [];
        expect(starts).toHaveLength(counts.get(`g${i}`)!);
        // At most max × weight in any interval of the window (how close to it a group comes depends
        // on the machine: at groupConcurrency 1 its starts follow one another's acks).
        expect(maxStartsInAnyInterval(starts, spanOf(perMs))).toBeLessThanOrEqual(weightOf(i));
        if (i % 2 === 0) {
          // Its 2w + 1 starts span two whole windows at least: it waited for each (without quotas they
          // follow one another's acks, a few ms apart).
          expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(2 * spanOf(perMs) - 1);
        }
      }
    } finally {
      await processes.stopAll();
    }
  }, 300_000);

  it('groups under their quota are unaffected: they finish while a capped group waits, which then runs once the quota goes', async () => {
    const topic = uniqueTopic('quota');
    const queue = await fx.service();
    // A window of a day: the capped group cannot start a sixth message during the test, whatever its speed.
    const day = 86_400_000;
    await queue.setGroupQuotas(topic, { default: { max: 50, perMs: day }, groups: { hot: { max: 5, perMs: day } } });
    const counts = new Map<string, number>([['hot', 100]]);
    for (let i = 0; i < 200; i++) counts.set(`t${i}`, 10);
    const processes = new ConsumerProcesses({ ...fx.consumerEnv, TOPIC: topic, HANDLER_MS: '0', CONCURRENCY: '8' });
    try {
      await Promise.all(Array.from({ length: 4 }, () => processes.start()));
      const total = await pushGroups(queue, topic, counts);
      // Every message but the capped group's 95 held ones: the others never wait for it.
      await processes.waitForAcks('', total - 95, 120_000);
      const startsOf = (group: string) => processes.of('start').filter((event) => event.group === group).length;
      expect(startsOf('hot')).toBe(5);
      for (let i = 0; i < 200; i++) expect(startsOf(`t${i}`)).toBe(10);
      const stats = await queue.stats(topic);
      expect(stats.ready).toBe(95);
      // Removing the quotas ends their holds: the capped group runs to its end, and the topic
      // keeps nothing of the quotas.
      await queue.setGroupQuotas(topic, null);
      await processes.waitForAcks('', total, 120_000);
      expect(startsOf('hot')).toBe(100);
      expect(await quotaKeys(topic)).toEqual([]);
    } finally {
      await processes.stopAll();
    }
  }, 300_000);

  it('work-conserving: a group alone with work runs at its quota (90 % of it or more), never over', async () => {
    const topic = uniqueTopic('quota');
    const services = [await fx.service(), await fx.service()];
    const [max, perMs, count] = [10, 1_000, 41];
    await services[0].setGroupQuotas(topic, { groups: { solo: { max, perMs } } });
    await services[0].setLimits(topic, { groupConcurrency: 20 });
    await services[0].pause(topic);
    await services[0].pushMany(
      topic,
      Array.from({ length: count }, (_, n) => ({ payload: n, group: 'solo' })),
    );
    const run = await localRun(services, topic, count, 0);
    expect(maxStartsInAnyInterval(run.starts, spanOf(perMs))).toBe(max);
    const span = Math.max(...run.starts) - Math.min(...run.starts);
    const waits = Math.floor((count - 1) / max);
    // Each wait may also take the worst event-loop delay seen (a consumer waits on a timer).
    expect(span).toBeLessThanOrEqual(leastSpanMs(count, max, spanOf(perMs)) / 0.9 + waits * run.loopDelayMs);
  }, 120_000);

  it('both groupRateLimit and a quota apply: the stricter one holds', async () => {
    const topic = uniqueTopic('quota');
    const services = [await fx.service()];
    await services[0].setLimits(topic, { groupRateLimit: { max: 6, perMs: 1_000 }, groupConcurrency: 10 });
    await services[0].setGroupQuotas(topic, { groups: { a: { max: 3, perMs: 1_000 } } });
    await services[0].pause(topic);
    await services[0].pushMany(
      topic,
      Array.from({ length: 20 }, (_, n) => ({ payload: n, group: n % 2 === 0 ? 'a' : 'b' })),
    );
    const run = await localRun(services, topic, 20, 0);
    const startsOf = (group: string) => run.starts.filter((_, i) => run.groups[i] === group);
    expect(maxStartsInAnyInterval(startsOf('a'), spanOf(1_000))).toBe(3);
    expect(maxStartsInAnyInterval(startsOf('b'), spanOf(1_000))).toBe(6);
  }, 120_000);

  it('a window longer than its field holds moves to the log and still counts every start', async () => {
    const topic = uniqueTopic('quota');
    const queue = await fx.service();
    await queue.setGroupQuotas(topic, { default: { max: 80, perMs: 60_000 } });
    await queue.pushMany(
      topic,
      Array.from({ length: 90 }, (_, i) => ({ payload: i, group: 'a' })),
    );
    const lease = { count: 1, leaseMs: 30_000 };
    // 80 starts, each at its own ms (more than the 64 a group's field keeps before the log).
    for (let i = 0; i < 80; i++) {
      const [message] = await queue.reserve(topic, lease);
      expect(message?.payload).toBe(i);
      await queue.ack(message);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const keys = Object.keys(await snapshotTopic(fx.redis, topic));
    expect(keys.some((key) => key.endsWith(':quota-log'))).toBe(true);
    expect(await queue.reserve(topic, lease)).toEqual([]);
    // The group's state kept beside the quotas is neither a quota nor a window for setLimits' mark.
    expect(await queue.groupQuotas(topic)).toEqual({ default: { max: 80, perMs: 60_000 } });
    await queue.setLimits(topic, { groupConcurrency: 1 });
    const snapshot = await snapshotTopic(fx.redis, topic);
    const limits = Object.entries(snapshot).find(([key]) => key.endsWith(':limits'))?.[1];
    expect(limits).toMatchObject({ qt: String(spanOf(60_000)) });
    expect(await queue.reserve(topic, lease)).toEqual([]);
    // A higher max counts the same 80 starts: exactly 5 more start.
    await queue.setGroupQuotas(topic, { default: { max: 85, perMs: 60_000 } });
    for (let i = 0; i < 5; i++) await queue.ack((await queue.reserve(topic, lease))[0]);
    expect(await queue.reserve(topic, lease)).toEqual([]);
    expect((await queue.stats(topic)).ready).toBe(5);
  });

  it('the handler-time budget: a group starts only while its handler time in the window is below it', async () => {
    const topic = uniqueTopic('quota');
    const services = [await fx.service(), await fx.service()];
    // Handlers of 100 ms one at a time (groupConcurrency 1): the k-th start in a window of 2 s sees
    // the k - 1 before it ended in the window, each over 99 ms on the server clock (lease to ack),
    // so (k - 1) × 99 < 450 and k <= 5. The handler time in any window is then within the budget
    // plus one delivery (the last started under it): 5 × 100 ms at most here.
    await services[0].setGroupQuotas(topic, { default: { max: 1_000, perMs: 2_000, handlerMs: 450 } });
    await services[0].pause(topic);
    await services[0].pushMany(
      topic,
      Array.from({ length: 16 }, (_, n) => ({ payload: n, group: n % 2 === 0 ? 'a' : 'b' })),
    );
    const run = await localRun(services, topic, 16, 100);
    for (const group of ['a', 'b']) {
      const starts = run.starts.filter((_, i) => run.groups[i] === group);
      expect(maxStartsInAnyInterval(starts, 2_000)).toBeLessThanOrEqual(5);
      // 8 starts at most 5 a window: the group waited for its budget at least once.
      expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThan(2_000);
    }
  }, 120_000);

  it("scaleByWeight scales the handler-time budget too; a failed delivery's time counts", async () => {
    const topic = uniqueTopic('quota');
    const queue = await fx.service();
    await queue.setGroupWeights(topic, { heavy: 100 });
    // 40 ms of handler time a minute, 4 s for heavy (weight 100): far apart, so a loaded machine's
    // late timers and slow calls cannot put heavy over its budget or keep light under its own.
    await queue.setGroupQuotas(topic, { default: { max: 100, perMs: 60_000, handlerMs: 40, scaleByWeight: true } });
    await queue.pushMany(topic, [
      { payload: 1, group: 'light' },
      { payload: 1, group: 'heavy' },
      { payload: 2, group: 'light' },
      { payload: 2, group: 'heavy' },
    ]);
    const lease = { count: 5, leaseMs: 30_000 };
    const first = await queue.reserve(topic, lease);
    expect(first.map((message) => message.group).sort()).toEqual(['heavy', 'light']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // light's first delivery fails after 50 ms or more (its retry keeps the group's slot); heavy's is acked.
    await queue.nack(
      first.find((message) => message.group === 'light')!,
      { delayMs: 0 },
    );
    await queue.ack(first.find((message) => message.group === 'heavy')!);
    // heavy used about 50 of its 4,000 ms (40 unscaled): its next starts; light's retry runs (a retry takes no turn).
    const second = await queue.reserve(topic, lease);
    expect(second.map((message) => [message.group, message.attempt]).sort()).toEqual([
      ['heavy', 1],
      ['light', 2],
    ]);
    await queue.ack(second.find((message) => message.group === 'light')!);
    // light used 50 ms and more (the failed delivery counts) of its 40: its next message waits.
    expect(await queue.reserve(topic, lease)).toEqual([]);
    expect((await queue.stats(topic)).ready).toBe(1);
  });

  it('a lost lease and a release end a delivery for the budget: its time counts, and nothing stays running', async () => {
    const topic = uniqueTopic('quota');
    const queue = await fx.service();
    await queue.setGroupQuotas(topic, { default: { max: 100, perMs: 60_000, handlerMs: 40 } });
    await queue.pushMany(topic, [
      { payload: 1, group: 'a' },
      { payload: 2, group: 'a' },
      { payload: 1, group: 'b' },
      { payload: 2, group: 'b' },
    ]);
    // The running deliveries ('i<id>') and each group's count of them (its entry's first number).
    const runs = async () => {
      const [state] = Object.entries(await snapshotTopic(fx.redis, topic)).filter(([key]) =>
        key.endsWith(':group-quotas'),
      );
      const fields = Object.entries((state?.[1] ?? {}) as Record<string, string>);
      return fields.filter(
        ([field, value]) => field.startsWith('i') || (field.startsWith('g') && !value.startsWith('0 ')),
      );
    };
    const first = await queue.reserve(topic, { count: 5, leaseMs: 50 });
    expect(first.map((message) => message.group).sort()).toEqual(['a', 'b']);
    expect(await runs()).toHaveLength(4);
    // a's lease is lost (the next reserve finds it expired); b's is released after 60 ms.
    await new Promise((resolve) => setTimeout(resolve, 60));
    await queue.release(first.find((message) => message.group === 'b')!);
    const retries = await queue.reserve(topic, { count: 5, leaseMs: 30_000 });
    expect(retries.map((message) => message.group).sort()).toEqual(['a', 'b']);
    for (const message of retries) await queue.ack(message);
    // Both used 60 ms and more of their 40: their next messages wait; no delivery is left running.
    expect(await queue.reserve(topic, { count: 5, leaseMs: 30_000 })).toEqual([]);
    expect(await runs()).toEqual([]);
  });

  it('round-trips the quotas as set; null and {} remove them, and the topic keeps nothing of them', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic('quota');
    expect(await queue.groupQuotas(topic)).toEqual({});
    const quotas: GroupQuotas = {
      default: { max: 50, perMs: 1_000, scaleByWeight: true },
      groups: {
        ['__proto__']: { max: 600, perMs: 60_000, handlerMs: 10_000 },
        'tenant-x': { max: 1, perMs: 10, scaleByWeight: false, handlerMs: 86_400_000_000 },
      },
    };
    await queue.setGroupQuotas(topic, quotas);
    const read = await queue.groupQuotas(topic);
    expect(read).toEqual(quotas);
    expect(Object.getPrototypeOf(read.groups)).toBeNull();
    await queue.setGroupQuotas(topic, { groups: { a: { max: 2, perMs: 100 } } });
    expect(await queue.groupQuotas(topic)).toEqual({ groups: { a: { max: 2, perMs: 100 } } });
    await queue.setGroupQuotas(topic, {});
    expect(await queue.groupQuotas(topic)).toEqual({});
    await queue.setGroupQuotas(topic, { default: { max: 2, perMs: 100 } });
    await queue.setGroupQuotas(topic, null);
    expect(await quotaKeys(topic)).toEqual([]);
  });

  it('writes the quotas to every partition; setLimits keeps their mark', async () => {
    const topic = uniqueTopic('quota');
    const queue = await fx.service({ topics: { [topic]: { partitions: 4 } } });
    await queue.setGroupQuotas(topic, { default: { max: 3, perMs: 1_000 } });
    await queue.setLimits(topic, { groupConcurrency: 2 });
    const snapshot = await snapshotTopic(fx.redis, topic);
    const quotas = Object.entries(snapshot).filter(([key]) => key.endsWith(':group-quotas'));
    expect(quotas).toHaveLength(4);
    for (const [, value] of quotas) expect(value).toEqual({ q: '3 1000 0 0' });
    const limits = Object.entries(snapshot).filter(([key]) => key.endsWith(':limits'));
    expect(limits).toHaveLength(4);
    for (const [, value] of limits) expect(value).toMatchObject({ qt: '1020', gc: '2' });
    await queue.setLimits(topic, null);
    await queue.setGroupQuotas(topic, null);
    expect(await quotaKeys(topic)).toEqual([]);
  });

  it('refuses bad quotas with a typed error naming the field (never a group) and changes nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic('quota');
    await queue.setGroupQuotas(topic, { default: { max: 3, perMs: 1_000 }, groups: { a: { max: 1, perMs: 100 } } });
    const before = await snapshotTopic(fx.redis, topic);
    const ok = { max: 1, perMs: 1_000 };
    const tooMany = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`g${i}`, ok]));
    const bad: unknown[] = [
      undefined,
      [],
      'a',
      5,
      new Map(),
      { other: ok },
      { default: null },
      { default: [] },
      { default: { max: 1 } },
      { default: { perMs: 1_000 } },
      { default: { ...ok, extra: 1 } },
      { default: { ...ok, max: 0 } },
      { default: { ...ok, max: 1_000_001 } },
      { default: { ...ok, max: 1.5 } },
      { default: { ...ok, max: '1' } },
      { default: { ...ok, max: Number.NaN } },
      { default: { ...ok, perMs: 9 } },
      { default: { ...ok, perMs: 86_400_001 } },
      { default: { ...ok, perMs: Number.POSITIVE_INFINITY } },
      { default: { ...ok, scaleByWeight: 1 } },
      { default: { ...ok, scaleByWeight: 'true' } },
      { default: { ...ok, handlerMs: 0 } },
      { default: { ...ok, handlerMs: 86_400_000_001 } },
      { default: { ...ok, handlerMs: -1 } },
      { groups: [] },
      { groups: null },
      { groups: { a: null } },
      { groups: { a: { ...ok, max: -1 } } },
      { groups: { '': ok } },
      { groups: { 'a\0b': ok } },
      { groups: { [`x${'\ud800'}`]: ok } },
      { groups: { ['g'.repeat(257)]: ok } },
      { groups: tooMany },
      { default: ok, groups: Object.assign(Object.create({ inherited: true }) as object, { a: ok }) },
    ];
    for (const quotas of bad) {
      await expect(queue.setGroupQuotas(topic, quotas as GroupQuotas)).rejects.toBeInstanceOf(InvalidOptionError);
    }
    await expect(queue.setGroupQuotas('bad topic', { default: ok })).rejects.toBeInstanceOf(InvalidTopicError);
    await expect(queue.groupQuotas('bad{topic}')).rejects.toBeInstanceOf(InvalidTopicError);
    // The errors name the field, never a group.
    for (const quotas of [
      { groups: { 'tenant-secret': { max: 0, perMs: 1_000 } } },
      { groups: { ['tenant-secret'.repeat(30)]: ok } },
      { groups: { 'tenant-secret': 'x' } },
    ]) {
      const error = (await queue.setGroupQuotas(topic, quotas as GroupQuotas).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error.message).not.toContain('tenant-secret');
      expect((error as InvalidOptionError).option).toMatch(/^groupQuotas/);
    }
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    expect(await queue.groupQuotas(topic)).toEqual({
      default: { max: 3, perMs: 1_000 },
      groups: { a: { max: 1, perMs: 100 } },
    });
  });
});
