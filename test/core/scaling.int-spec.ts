import { Registry } from 'prom-client';
import {
  InvalidOptionError,
  InvalidTopicError,
  RedisAckQueueMetrics,
  type ScalingReport,
  type ScalingTarget,
} from '../../lib';
import { internalsOf } from '../../lib/queue/queue-internals';
import { commandCounts, snapshotTopic, uniqueTopic, useRedis, type TestClient } from '../support/queue-fixture';

/**
 * The consumers the signal should compute from a report's own inputs: the fewest handler slots
 * past the offered load whose Erlang C mean wait is within the target, at least those that start
 * the backlog's last message within it, per consumer, clamped (docs/scaling.md).
 */
function expectedConsumers(report: ScalingReport): number {
  const { arrivalPerSecond, handlingMs: s, backlog, targetWaitMs, concurrency, minConsumers, maxConsumers } = report;
  const clamp = (n: number) => Math.min(maxConsumers, Math.max(minConsumers, n));
  if (arrivalPerSecond === 0 && backlog === 0) return clamp(minConsumers);
  const load = (arrivalPerSecond * s) / 1000;
  let b = 1;
  let slots = maxConsumers * concurrency;
  for (let c = 1; c <= maxConsumers * concurrency; c++) {
    b = (load * b) / (c + load * b);
    if (c > load && (((c * b) / (c - load * (1 - b))) * s) / (c - load) <= targetWaitMs) {
      slots = c;
      break;
    }
  }
  slots = Math.max(slots, Math.ceil((backlog * s) / targetWaitMs));
  return clamp(Math.ceil(slots / concurrency));
}

/**
 * Writes the topic's history record of the current and previous minutes (server clock) as if
 * consumers had handled `handled` messages of `handlingMs` each and `pushed` had been pushed.
 */
async function fakeHistory(redis: TestClient, topic: string, pushed: number, handled: number, handlingMs: number) {
  const [seconds] = await redis.time();
  const minute = Math.floor(Number(seconds) / 60);
  // Bucket 50 of the handling histogram; only the count of the buckets and the sum matter here.
  for (const m of [minute - 1, minute]) {
    const record = `${m}|${pushed / 2}|0|0|0|0|0|${(handled / 2) * handlingMs}||50:${handled / 2}`;
    await redis.hset(`{ackq:${topic}}:history`, String(m % 1500), record);
  }
}

describe('the scaling signal', () => {
  const fx = useRedis();

  it('answers null for a topic without a target, and writes nothing', async () => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await queue.push(topic, { n: 1 });
    const before = await snapshotTopic(fx.redis, topic);
    expect(await queue.scaling(topic)).toBeNull();
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  const BAD: [string, unknown][] = [
    ['not an object', 5],
    ['an array', [1000]],
    ['no targetWaitMs', {}],
    ['targetWaitMs 0', { targetWaitMs: 0 }],
    ['targetWaitMs past a day', { targetWaitMs: 86_400_001 }],
    ['a fraction', { targetWaitMs: 1.5 }],
    ['a string', { targetWaitMs: '1000' }],
    ['minConsumers below 0', { targetWaitMs: 1000, minConsumers: -1 }],
    ['maxConsumers 0', { targetWaitMs: 1000, maxConsumers: 0 }],
    ['maxConsumers past 10,000', { targetWaitMs: 1000, maxConsumers: 10_001 }],
    ['minConsumers over maxConsumers', { targetWaitMs: 1000, minConsumers: 5, maxConsumers: 4 }],
    ['concurrency 0', { targetWaitMs: 1000, concurrency: 0 }],
    ['cooldownMs past an hour', { targetWaitMs: 1000, cooldownMs: 3_600_001 }],
    ['an unknown field', { targetWaitMs: 1000, maxReplicas: 3 }],
  ];

  it.each(BAD)('refuses a target with %s, changing nothing', async (_name, target) => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await queue.setScalingTarget(topic, { targetWaitMs: 500, maxConsumers: 7 });
    await queue.push(topic, { n: 1 });
    const before = await snapshotTopic(fx.redis, topic);
    await expect(queue.setScalingTarget(topic, target as ScalingTarget)).rejects.toBeInstanceOf(InvalidOptionError);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('refuses a bad topic name', async () => {
    const queue = await fx.service({ history: false });
    await expect(queue.setScalingTarget('a b', { targetWaitMs: 1000 })).rejects.toBeInstanceOf(InvalidTopicError);
    await expect(queue.scaling('a b')).rejects.toBeInstanceOf(InvalidTopicError);
  });

  it('fills in the defaults, and null removes the target and its state', async () => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await queue.setScalingTarget(topic, { targetWaitMs: 2000 });
    const report = await queue.scaling(topic);
    expect(report).toMatchObject({
      topic,
      desiredConsumers: 0,
      computedConsumers: 0,
      arrivalPerSecond: 0,
      handlingMs: 0,
      backlog: 0,
      targetWaitMs: 2000,
      minConsumers: 0,
      maxConsumers: 1000,
      concurrency: 1,
      cooldownMs: 30_000,
    });
    const [seconds] = await fx.redis.time();
    expect(Math.abs(report!.at - Number(seconds) * 1000)).toBeLessThan(60_000);
    await queue.setScalingTarget(topic, null);
    expect(await queue.scaling(topic)).toBeNull();
    expect(await snapshotTopic(fx.redis, topic)).toEqual({});
  });

  it('asks for one consumer (or minConsumers) while messages wait and no handling time is known', async () => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, n) => ({ payload: { n } })),
    );
    await queue.push(topic, { later: true }, { delayMs: 600_000 });
    await queue.setScalingTarget(topic, { targetWaitMs: 1000 });
    expect(await queue.scaling(topic)).toMatchObject({ backlog: 10, desiredConsumers: 1, handlingMs: 0 });
    await queue.setScalingTarget(topic, { targetWaitMs: 1000, minConsumers: 3 });
    expect(await queue.scaling(topic)).toMatchObject({ backlog: 10, desiredConsumers: 3 });
  });

  it('clears the backlog within the target: ceil(backlog x handling / target) slots, per consumer', async () => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await fakeHistory(fx.redis, topic, 0, 100, 20);
    await queue.pushMany(
      topic,
      Array.from({ length: 1000 }, (_, n) => ({ payload: { n } })),
    );
    await queue.setScalingTarget(topic, { targetWaitMs: 1000, concurrency: 4 });
    // 1,000 x 20 ms / 1 s = 20 slots, 5 consumers of 4.
    expect(await queue.scaling(topic)).toMatchObject({
      backlog: 1000,
      handlingMs: 20,
      arrivalPerSecond: 0,
      computedConsumers: 5,
      desiredConsumers: 5,
    });
  });

  it.each([
    [12_000, 20, 100],
    [120_000, 20, 1000],
    [120_000, 20, 5],
    [6_000, 900, 2000],
    [600_000, 3, 50],
  ])(
    'computes Erlang C from the history on a first read (%i pushed in 2 minutes, %i ms handlers, target %i ms)',
    async (pushed, handlingMs, targetWaitMs) => {
      const queue = await fx.service({ history: false });
      const topic = uniqueTopic();
      await fakeHistory(fx.redis, topic, pushed, 1000, handlingMs);
      await queue.setScalingTarget(topic, { targetWaitMs, concurrency: 2 });
      const report = (await queue.scaling(topic))!;
      expect(report.handlingMs).toBe(handlingMs);
      // Over the current and previous minutes: 60 to 120 s.
      expect(report.arrivalPerSecond).toBeGreaterThanOrEqual(pushed / 120 - 0.01);
      expect(report.arrivalPerSecond).toBeLessThanOrEqual(pushed / 60 + 0.01);
      expect(report.computedConsumers).toBe(expectedConsumers(report));
      expect(report.computedConsumers).toBeGreaterThan((report.arrivalPerSecond * handlingMs) / 1000 / 2);
    },
  );

  it.each([
    [24_000_000, 10, 1000],
    [24_000_000, 10, 2],
    [60_000_000, 10, 100],
  ])(
    'approximates Erlang C past 2,000 busy slots within 1 %% (%i pushed in 2 minutes, %i ms handlers, target %i ms)',
    async (pushed, handlingMs, targetWaitMs) => {
      const queue = await fx.service({ history: false });
      const topic = uniqueTopic();
      await fakeHistory(fx.redis, topic, pushed, 1000, handlingMs);
      await queue.setScalingTarget(topic, { targetWaitMs, maxConsumers: 10_000 });
      const report = (await queue.scaling(topic))!;
      expect((report.arrivalPerSecond * handlingMs) / 1000).toBeGreaterThan(2000);
      const exact = expectedConsumers(report);
      expect(Math.abs(report.computedConsumers - exact)).toBeLessThanOrEqual(Math.ceil(exact * 0.01));
    },
  );

  it('goes up at once and comes down only after the cooldown', async () => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await fakeHistory(fx.redis, topic, 0, 100, 20);
    await queue.setScalingTarget(topic, { targetWaitMs: 1000, cooldownMs: 3_600_000 });
    expect(await queue.scaling(topic)).toMatchObject({ desiredConsumers: 0 });
    await queue.pushMany(
      topic,
      Array.from({ length: 1000 }, (_, n) => ({ payload: { n } })),
    );
    expect(await queue.scaling(topic)).toMatchObject({ computedConsumers: 20, desiredConsumers: 20 });
    queue.consume(topic, () => undefined, { concurrency: 50 });
    await expectBacklog(() => queue.scaling(topic), 0);
    // Lower, but within the hour's cooldown: it stays.
    expect(await queue.scaling(topic)).toMatchObject({ computedConsumers: 0, desiredConsumers: 20 });
    // A new target keeps the state; with no cooldown it comes down on the next read.
    await queue.setScalingTarget(topic, { targetWaitMs: 1000, cooldownMs: 0 });
    expect(await queue.scaling(topic)).toMatchObject({ computedConsumers: 0, desiredConsumers: 0 });
  });

  it('clamps the signal into new bounds at once', async () => {
    const queue = await fx.service({ history: false });
    const topic = uniqueTopic();
    await fakeHistory(fx.redis, topic, 0, 100, 20);
    await queue.pushMany(
      topic,
      Array.from({ length: 1000 }, (_, n) => ({ payload: { n } })),
    );
    await queue.setScalingTarget(topic, { targetWaitMs: 1000 });
    expect(await queue.scaling(topic)).toMatchObject({ desiredConsumers: 20 });
    await queue.setScalingTarget(topic, { targetWaitMs: 1000, maxConsumers: 8 });
    expect(await queue.scaling(topic)).toMatchObject({ computedConsumers: 8, desiredConsumers: 8 });
  });

  it('reads a partitioned topic: the backlog of every partition, the same from a scrape', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ history: false, topics: { [topic]: { partitions: 4 } } });
    await fakeHistory(fx.redis, topic, 0, 100, 20);
    await queue.pushMany(
      topic,
      Array.from({ length: 500 }, (_, n) => ({ payload: { n } })),
    );
    await queue.setScalingTarget(topic, { targetWaitMs: 1000 });
    expect(await queue.scaling(topic)).toMatchObject({ backlog: 500, desiredConsumers: 10 });
    const gauges = await queue.gauges(topic);
    const scraped = await internalsOf(queue).scaling(topic, { backlog: gauges.ready, pushed: gauges.pushedTotal });
    expect(scraped).toMatchObject({ backlog: 500, desiredConsumers: 10 });
    // Its state lives in the home slot, beside the history.
    const keys = Object.keys(await snapshotTopic(fx.redis, topic));
    expect(keys).toContain(`{ackq:${topic}}:scaling`);
  });

  it('costs a scrape one scaling call per topic, partitions read once, and serves the same number as scaling()', async () => {
    // Nothing else of this file runs meanwhile (consumers, history flushes): the counts are the scrape's.
    await fx.closeServices();
    const topic = uniqueTopic();
    const plain = uniqueTopic();
    const queue = await fx.service({ history: false, topics: { [topic]: { partitions: 4 } } });
    await fakeHistory(fx.redis, topic, 0, 100, 20);
    await fakeHistory(fx.redis, plain, 0, 100, 20);
    await queue.pushMany(
      topic,
      Array.from({ length: 600 }, (_, n) => ({ payload: { n } })),
    );
    await queue.pushMany(
      plain,
      Array.from({ length: 300 }, (_, n) => ({ payload: { n } })),
    );
    await queue.setScalingTarget(topic, { targetWaitMs: 1000 });
    await queue.setScalingTarget(plain, { targetWaitMs: 1000 });
    const untargeted = uniqueTopic();
    const registry = new Registry();
    const metrics = new RedisAckQueueMetrics(queue, { registry, topics: [topic, plain, untargeted] });
    try {
      const before = await commandCounts(fx.redis);
      const text = await registry.metrics();
      const after = await commandCounts(fx.redis);
      // Gauges: 4 + 1 + 1 metrics calls; scaling: one per topic, the one without a target included.
      const scripts = (counts: Record<string, number>) =>
        Object.entries(counts).reduce((sum, [command, n]) => sum + (command.startsWith('eval') ? n : 0), 0);
      expect(scripts(after) - scripts(before)).toBe(6 + 3);
      const gauge = (name: string) =>
        Number(
          text
            .split('\n')
            .find((line) => line.startsWith(`redis_ack_queue_desired_consumers{topic="${name}"}`))
            ?.split(' ')[1],
        );
      expect(gauge(topic)).toBe(12);
      expect(gauge(plain)).toBe(6);
      expect(text).not.toContain(`redis_ack_queue_desired_consumers{topic="${untargeted}"}`);
      expect(await queue.scaling(topic)).toMatchObject({ desiredConsumers: 12 });
    } finally {
      metrics.close();
    }
  });
});

/** Polls the signal until its backlog is `backlog`. */
async function expectBacklog(read: () => Promise<ScalingReport | null>, backlog: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await read())!.backlog !== backlog) {
    if (Date.now() > deadline) throw new Error(`backlog not ${backlog} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
