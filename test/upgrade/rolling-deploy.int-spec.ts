import { expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { checkDeliveries, inspectLeftovers, leaveEverything, serveLeftovers } from './support/leftovers';
import { type ReleaseContext, usePreviousRelease } from './support/previous-release';

type Side = 'old' | 'current';
type Item = { n: number; failOnce: boolean };
interface Start {
  side: Side;
  id: string;
  n: number;
  attempt: number;
  group: string | undefined;
  from: string | undefined;
  /** For a delayed message: how late it started after its due time (server clock, ms; never negative). */
  lateness?: number;
}

/** Messages of the side-by-side test: every other one grouped (four groups), every seventh failing once. */
const COUNT = 120;
const GROUP_COUNT = 4;
const groupOf = (n: number) => (n % 2 === 0 ? `g${(n / 2) % GROUP_COUNT}` : undefined);
const failsOnce = (n: number) => n % 7 === 0;
/** Ungrouped messages that wait a little first (a grouped delayed one's place would depend on timing). */
const delayOf = (n: number) => (groupOf(n) === undefined && n % 5 === 0 ? 200 : undefined);
/** Which side pushes it: three in a row each, so both push grouped, ungrouped and delayed messages. */
const producerOf = (n: number): Side => (Math.floor(n / 3) % 2 === 0 ? 'old' : 'current');

describe('a rolling deploy from the previous release', () => {
  const fx = useRedis();
  const release = usePreviousRelease();

  it('runs old and current services side by side: each message once, groups in order, none early', async () => {
    expect(release.loadedVersion).toBe(release.version);
    expectLogs(/boom on first attempt/);
    // Grouped messages on a topic of their own: its consumers follow the path docs/upgrading.md gives for them.
    const topics = { plain: uniqueTopic('rolling'), grouped: uniqueTopic('rolling-grouped') };
    const topicOf = (n: number) => (groupOf(n) === undefined ? topics.plain : topics.grouped);
    const old = await release.service({ connection: fx.server.url, logLevel: 'error' });
    const current = await fx.service();
    const starts: Start[] = [];
    const serverNow = async () => {
      const [seconds, micros] = await fx.redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    // On the plain topic each side holds its first message until the other has one too, so both surely take part.
    let opened!: () => void;
    const bothStarted = new Promise<void>((resolve) => (opened = resolve));
    const handler =
      (side: Side, gated: boolean) =>
      async (item: Item, context: Pick<ReleaseContext, 'id' | 'attempt' | 'group' | 'headers' | 'enqueuedAt'>) => {
        const first = gated && !starts.some((start) => start.side === side && start.group === undefined);
        const { id, attempt, group, headers, enqueuedAt } = context;
        const start: Start = { side, id, n: item.n, attempt, group, from: headers.from };
        starts.push(start);
        if (new Set(starts.filter((s) => s.group === undefined).map((s) => s.side)).size === 2) opened();
        const delayMs = delayOf(item.n);
        if (delayMs && attempt === 1) start.lateness = (await serverNow()) - (enqueuedAt + delayMs);
        if (first) await bothStarted;
        if (item.failOnce && context.attempt === 1) throw new Error(`boom on first attempt`);
      };
    // A small batch: neither side can prefetch the other's share while its first message waits.
    const options = { concurrency: 2, batchSize: 2, maxAttempts: 3, backoff: { type: 'fixed' as const, delayMs: 10 } };
    const consumers = [
      old.consume(topics.plain, (payload, context) => handler('old', true)(payload as Item, context), options),
      current.consume<Item>(topics.plain, handler('current', true), options),
      current.consume<Item>(topics.grouped, handler('current', false), options),
    ];
    if (release.servesCurrentGroups) {
      const oldHandler = handler('old', false);
      consumers.push(old.consume(topics.grouped, (payload, context) => oldHandler(payload as Item, context), options));
    }

    // Both produce, taking turns, so each group holds messages of both in a known push order.
    for (let n = 0; n < COUNT; n++) {
      const producer = producerOf(n) === 'old' ? old : current;
      const group = groupOf(n);
      const delayMs = delayOf(n);
      await producer.push(
        topicOf(n),
        { n, failOnce: failsOnce(n) },
        { id: `m-${n}`, ...(group && { group }), ...(delayMs && { delayMs }), headers: { from: producerOf(n) } },
      );
    }
    const succeeded = () => new Set(starts.filter((s) => !failsOnce(s.n) || s.attempt > 1).map((s) => s.id));
    await eventually(() => succeeded().size === COUNT, 30_000);
    // The current service's count: one of the previous release counts the encoding anchor as a lease.
    for (const topic of Object.values(topics)) await current.waitUntilIdle(topic);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    for (const topic of Object.values(topics))
      expect(await current.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });

    // Once each, and a second time only after failing once.
    const expected = Array.from({ length: COUNT }, (_, n) => (failsOnce(n) ? [`m-${n}.1`, `m-${n}.2`] : [`m-${n}.1`]));
    expect(starts.map((s) => `${s.id}.${s.attempt}`).sort()).toEqual(expected.flat().sort());
    // Payloads, groups and headers as pushed, whichever side pushed and whichever served.
    for (const s of starts) expect(s).toMatchObject({ id: `m-${s.n}`, group: groupOf(s.n), from: producerOf(s.n) });
    // Each group one at a time in push order, across both sides (a failed one again before the next).
    for (let g = 0; g < GROUP_COUNT; g++) {
      const group = `g${g}`;
      const inOrder = expected.filter((_, n) => groupOf(n) === group).flat();
      expect(starts.filter((s) => s.group === group).map((s) => `${s.id}.${s.attempt}`)).toEqual(inOrder);
    }
    // Delayed ones (pushed by either side) not early.
    const lateness = starts.filter((s) => s.lateness !== undefined).map((s) => s.lateness!);
    expect(lateness).toHaveLength(Array.from({ length: COUNT }, (_, n) => delayOf(n)).filter(Boolean).length);
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    expect(new Set(starts.filter((s) => s.group === undefined).map((s) => s.side))).toEqual(
      new Set(['old', 'current']),
    );
  });

  it('lets a consumer of the previous release read what the current code left: every state', async () => {
    const topics = { plain: uniqueTopic('rolling'), grouped: uniqueTopic('rolling-grouped') };
    const current = await fx.service({ keepCompleted: true });
    const leftovers = await leaveEverything(current, topics);

    const old = await release.service({ connection: fx.server.url, logLevel: 'error' });
    await inspectLeftovers(old, topics);
    const deliveries = await serveLeftovers(old, topics.plain, fx.redis, leftovers.plain, current);
    checkDeliveries(deliveries, leftovers.plain);
    // Grouped messages: by the old consumer where it can serve them, else by the documented path (the old
    // consumers of grouped topics stopped, then the current ones started).
    if (!release.servesCurrentGroups) await old.close();
    const groupServer = release.servesCurrentGroups ? old : current;
    const grouped = await serveLeftovers(groupServer, topics.grouped, fx.redis, leftovers.grouped, current);
    checkDeliveries(grouped, leftovers.grouped);
  });

  it('shows a process of the previous release the encoding anchor as one lease at most, never as a message', async () => {
    const topic = uniqueTopic('anchor');
    const current = await fx.service();
    const old = await release.service({ connection: fx.server.url, logLevel: 'error' });
    await current.pushMany(topic, [
      { id: 'a-1', payload: 1 },
      { id: 'a-2', payload: 2 },
    ]);
    // The current code's reserve writes the anchor; the acks leave it.
    for (const message of await current.reserve(topic, { count: 5 })) expect(await current.ack(message)).toBe(true);
    expect(await current.stats(topic)).toMatchObject({ ready: 0, leased: 0 });
    expect((await old.stats(topic)).leased).toBeLessThanOrEqual(1);
    await old.push(topic, 'after', { id: 'b-1' });
    const [served, ...more] = await old.reserve(topic, { count: 5, leaseMs: 10 });
    expect([served.id, more]).toEqual(['b-1', []]);
    // Its lease long expired, the next reserve takes the message again, and nothing else.
    await eventually(async () => (await current.stats(topic)).leased === 0);
    expect((await old.reserve(topic, { count: 5 })).map((m) => [m.id, m.attempt])).toEqual([['b-1', 2]]);
  });

  // 0.1.0 counts globalConcurrency's room as n - ZCARD(:leased): an encoding anchor there would hold one slot for
  // good. The current code writes none while the prefix's stored format is json (older data is here), so a 0.1.0
  // consumer still serves such a topic, and a rollback to 0.1.0 leaves none unserved.
  it('lets a consumer of the previous release serve a topic with globalConcurrency 1 that the current code served', async () => {
    const topic = uniqueTopic('anchor');
    const current = await fx.service();
    const old = await release.service({ connection: fx.server.url, logLevel: 'error' });
    await current.setLimits(topic, { globalConcurrency: 1 });
    await current.push(topic, 'first', { id: 'c-1' });
    for (const message of await current.reserve(topic)) expect(await current.ack(message)).toBe(true);
    await current.push(topic, 'second', { id: 'c-2' });
    expect(await current.stats(topic)).toMatchObject({ ready: 1, leased: 0 });
    expect((await old.reserve(topic, { count: 5 })).map((m) => m.id)).toEqual(['c-2']);
  });
});
