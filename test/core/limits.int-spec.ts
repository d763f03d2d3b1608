import { monitorEventLoopDelay } from 'node:perf_hooks';
import { InvalidOptionError, RateLimitedError, type MessageContext, type RedisAckQueueService } from '../../lib';
import {
  commandCounts,
  eventually,
  snapshotTopic,
  uniqueTopic,
  useRedis,
  type TestClient,
} from '../support/queue-fixture';
import { dispatchAllowanceMs, dispatchDelays, leastSpanMs, maxStartsInAnyInterval } from '../support/start-times';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Handler starts (local clock) and how many ran at once. */
class Starts {
  readonly at: number[] = [];
  running = 0;
  maxRunning = 0;

  async run(holdMs: number): Promise<void> {
    this.at.push(Date.now());
    this.maxRunning = Math.max(this.maxRunning, ++this.running);
    await sleep(holdMs);
    this.running--;
  }
}

describe('fleet-wide limits', () => {
  const fx = useRedis();

  it('globalConcurrency holds every consumer of every service to n leased at once', async () => {
    const topic = uniqueTopic();
    const [a, b] = [await fx.service(), await fx.service()];
    await a.pushMany(
      topic,
      Array.from({ length: 30 }, (_, n) => ({ payload: n })),
    );
    const starts = new Starts();
    // Every consumer declares the same limits: one without any would withdraw them.
    a.consume(topic, () => starts.run(20), { concurrency: 5, globalConcurrency: 3 });
    b.consume(topic, () => starts.run(20), { concurrency: 5, globalConcurrency: 3 });
    await eventually(() => starts.at.length === 30 && starts.running === 0);
    expect(starts.maxRunning).toBe(3);
    expect(await b.limits(topic)).toEqual({ globalConcurrency: 3 });
    // None was taken over the limit: no attempt counted, none retried (the last acks may still
    // be on their way when the last handler returns).
    await a.waitUntilIdle(topic);
    expect(starts.at).toHaveLength(30);
    expect(await a.stats(topic)).toMatchObject({ ready: 0, leased: 0, dead: 0 });
  });

  it('rateLimit holds in every interval of perMs across services, at 95 % of the limit or more', async () => {
    const topic = uniqueTopic();
    const services = [await fx.service(), await fx.service(), await fx.service()];
    await services[0].setLimits(topic, { rateLimit: { max: 10, perMs: 1_000 } });
    const run = await rateRun(fx.redis, services, topic, 70, () => undefined);
    expect(maxStartsInAnyInterval(run.serverStarts, 1_000)).toBe(10);
    expect(run.attempts).toEqual([1]);
    expectNearTheLimit(run, 10, 1_000);
  });

  it("rateLimit holds on the handlers' clocks too: their starts across services keep max in every perMs", async () => {
    const topic = uniqueTopic();
    const services = [await fx.service(), await fx.service(), await fx.service()];
    await services[0].setLimits(topic, { rateLimit: { max: 20, perMs: 1_000 } });
    const run = await rateRun(fx.redis, services, topic, 5 * 20, () => undefined);
    const allowance = dispatchAllowanceMs(1_000);
    // On the server clock a window's starts begin perMs + allowance after the last one's first.
    expect(maxStartsInAnyInterval(run.serverStarts, 1_000 + allowance)).toBe(20);
    // A handler starts later than its reserve by the reply's trip and the event loop's delay
    // (measured: one clock on one machine). While those delays differ by at most the allowance,
    // the handlers see at most max in any perMs; a busy machine's larger spread shortens the
    // interval that holds by the excess, and no more.
    const delays = dispatchDelays(run.handlerStarts, run.serverStarts);
    const excess = Math.max(0, delays.max - delays.min - allowance);
    expect(maxStartsInAnyInterval(run.handlerStarts, 1_000 - excess)).toBeLessThanOrEqual(20);
    expect(run.attempts).toEqual([1]);
    expectNearTheLimit(run, 20, 1_000);
  });

  it('rateLimit on a partitioned topic: the partitions share the limit in every interval', async () => {
    const topic = uniqueTopic();
    const layout = { topics: { [topic]: { partitions: 2 } } };
    const services = [await fx.service(layout), await fx.service(layout)];
    await services[0].setLimits(topic, { rateLimit: { max: 10, perMs: 1_000 } });
    const run = await rateRun(fx.redis, services, topic, 60, () => undefined);
    expect(maxStartsInAnyInterval(run.serverStarts, 1_000)).toBeLessThanOrEqual(10);
    expect(run.attempts).toEqual([1]);
  });

  it('groupRateLimit holds each group in every interval of perMs, at 95 % of the limit or more', async () => {
    const topic = uniqueTopic();
    const services = [await fx.service(), await fx.service()];
    await services[0].setLimits(topic, { groupRateLimit: { max: 3, perMs: 1_000 }, groupConcurrency: 10 });
    const run = await rateRun(fx.redis, services, topic, 2 * 19, (n) => (n % 2 === 0 ? 'a' : 'b'));
    for (const group of ['a', 'b']) {
      const starts = run.serverStarts.filter((_, i) => run.groups[i] === group);
      expect(maxStartsInAnyInterval(starts, 1_000)).toBe(3);
      expectNearTheLimit({ ...run, serverStarts: starts }, 3, 1_000);
    }
    expect(run.attempts).toEqual([1]);
  });

  it('groupRateLimit holds a group over its rate while the other groups go on', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    await queue.setLimits(topic, { groupRateLimit: { max: 2, perMs: 400 }, groupConcurrency: 5 });
    await queue.pushMany(topic, [
      ...Array.from({ length: 6 }, (_, n) => ({ payload: { group: 'busy', n }, group: 'busy' })),
      ...Array.from({ length: 2 }, (_, n) => ({ payload: { group: 'calm', n }, group: 'calm' })),
    ]);
    const busy = new Starts();
    const calm = new Starts();
    queue.consume<{ group: string }>(topic, ({ group }) => (group === 'busy' ? busy : calm).run(1), {
      concurrency: 10,
    });
    await eventually(() => calm.at.length === 2);
    expect(busy.at.length).toBeLessThanOrEqual(2);
    await eventually(() => busy.at.length === 6);
  });

  it('keeps only the starts of the current windows: quiet groups are dropped, removed limits leave nothing', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    const [log, last] = [`{ackq:${topic}}:rate-log`, `{ackq:${topic}}:rate-last`];
    // Windows long enough that the 40 starts fall in them even on a loaded machine (a 300 ms window
    // ended while a busy CI machine still handled them, and dropped groups before the count).
    const windowMs = 5_000;
    await queue.setLimits(topic, {
      rateLimit: { max: 100, perMs: windowMs },
      groupRateLimit: { max: 5, perMs: windowMs },
    });
    await queue.pushMany(
      topic,
      Array.from({ length: 40 }, (_, n) => ({ payload: n, group: `g${n}` })),
    );
    let handled = 0;
    queue.consume(topic, () => void handled++, { concurrency: 8 });
    await eventually(() => handled === 40);
    expect(await fx.redis.zcard(last)).toBe(41);
    // Once every window ended (a start is kept 2 % past its window: prelude-limits.lua's rate_span),
    // the next start finds the 40 quiet groups and drops them.
    await sleep(Math.ceil(windowMs * 1.02) + 50);
    await queue.push(topic, 'later', { group: 'g-later' });
    await eventually(() => handled === 41);
    expect(await fx.redis.zrange(last, '0', '-1')).toEqual(['', 'g-later']);
    // The log holds the starts of the current windows only: the topic's and g-later's (none, once
    // those windows ended too and a reserve swept them: a loaded machine may take a window to look).
    const fields = (await fx.redis.zrange(log, '0', '-1')).map((entry) => entry.split('\0')[0]);
    expect(fields.length).toBeLessThanOrEqual(2);
    expect(fields.filter((field) => field !== '' && field !== 'g-later')).toEqual([]);
    await queue.setLimits(topic, null);
    expect(await fx.redis.exists(log, last)).toBe(0);
  });

  it('rateLimited holds the topic (or the group) without counting the attempt', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    await queue.pushMany(topic, [
      { payload: 'first', id: 'first' },
      { payload: 'second', id: 'second' },
    ]);
    const seen: { id: string; attempt: number; at: number }[] = [];
    let refused = false;
    queue.consume(
      topic,
      (_payload, context: MessageContext) => {
        seen.push({ id: context.id, attempt: context.attempt, at: Date.now() });
        if (!refused) {
          refused = true;
          context.rateLimited(300);
        }
      },
      { concurrency: 1 },
    );
    await eventually(() => seen.length === 3);
    const [refusedOne, next, again] = seen;
    // Nothing started during the hold; the refused delivery did not count.
    expect(next.at - refusedOne.at).toBeGreaterThanOrEqual(280);
    const retried = [next, again].find((s) => s.id === refusedOne.id)!;
    expect(retried.attempt).toBe(refusedOne.attempt);
  });

  it('a RateLimitedError from a grouped message holds that group only', async () => {
    const HOLD_MS = 5_000;
    const topic = uniqueTopic();
    const queue = await fx.service();
    await queue.pushMany(topic, [
      { payload: 'a1', group: 'a' },
      { payload: 'a2', group: 'a' },
      { payload: 'b1', group: 'b' },
      { payload: 'b2', group: 'b' },
    ]);
    const seen: string[] = [];
    let refused = false;
    queue.consume<string>(
      topic,
      (payload) => {
        seen.push(payload);
        if (payload === 'a1' && !refused) {
          refused = true;
          // Long enough that b's two messages finish inside it on a loaded machine.
          throw new RateLimitedError(HOLD_MS);
        }
      },
      { concurrency: 2 },
    );
    await eventually(() => seen.includes('b2'));
    // Group b went on while a was held; a's order holds after the hold.
    expect(seen.filter((p) => p.startsWith('a'))).toEqual(['a1']);
    await eventually(() => seen.length === 5, HOLD_MS + 10_000);
    expect(seen.filter((p) => p.startsWith('a'))).toEqual(['a1', 'a1', 'a2']);
  });

  it('consumers held by a limit wait without polling', async () => {
    const topic = uniqueTopic();
    // History off and the other services closed: the count is this consumer's alone.
    await fx.closeServices();
    const queue = await fx.service({ history: false });
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }]);
    let running = 0;
    queue.consume(topic, () => (running++, sleep(1_200)), { concurrency: 4 });
    await eventually(() => running === 1);
    const before = await commandCounts(fx.redis);
    await sleep(1_000);
    const after = await commandCounts(fx.redis);
    const scripts = (after.evalsha ?? 0) - (before.evalsha ?? 0);
    // Heartbeats and the odd look: a handful, where polling would be hundreds.
    expect(scripts).toBeLessThan(10);
    await eventually(() => running === 2);
  });

  it('an idle consumer of a rate-limited topic does not wake at every window', async () => {
    const topic = uniqueTopic();
    // History off and the other services closed: the count is this consumer's alone.
    await fx.closeServices();
    const queue = await fx.service({ history: false });
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    let handled = 0;
    queue.consume(topic, () => void handled++, { concurrency: 4, rateLimit: { max: 2, perMs: 100 } });
    await eventually(() => handled === 3);
    await sleep(200);
    const before = await commandCounts(fx.redis);
    await sleep(1_000);
    const after = await commandCounts(fx.redis);
    // Ten windows went by: an idle consumer looks about once a second, not once a window.
    expect((after.evalsha ?? 0) - (before.evalsha ?? 0)).toBeLessThan(5);
  });

  it('setLimits refuses anything but a plain object of known limits (or null) before writing anything', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    const set = { globalConcurrency: 3, rateLimit: { max: 10, perMs: 1_000 } };
    await queue.setLimits(topic, set);
    const before = await snapshotTopic(fx.redis, topic);
    class Limits {
      globalConcurrency = 2;
    }
    const bad: unknown[] = [
      [],
      new Date(),
      { globalConcurency: 5 },
      new Limits(),
      Object.create({ globalConcurrency: 2 }),
      new Map([['globalConcurrency', 2]]),
      undefined,
      'none',
      { rateLimit: new Date() },
      { rateLimit: { max: 5, perMs: 100, burst: 1 } },
      { groupRateLimit: [5, 100] },
    ];
    for (const limits of bad) {
      await expect(queue.setLimits(topic, limits as never)).rejects.toThrow(InvalidOptionError);
    }
    await expect(queue.setLimits(topic, { globalConcurency: 5 } as never)).rejects.toThrow(/globalConcurency/);
    expect(await queue.limits(topic)).toEqual(set);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    await queue.setLimits(topic, null);
    expect(await queue.limits(topic)).toEqual({});
  });

  it('refuses bad limits with a typed error, writing nothing', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    const bad = [
      { globalConcurrency: 0 },
      { globalConcurrency: 1.5 },
      { rateLimit: { max: 0, perMs: 100 } },
      { rateLimit: { max: 5, perMs: 1 } },
      { rateLimit: 5 },
      { groupRateLimit: { max: 1 } },
      { groupConcurrency: 1_001 },
    ];
    for (const limits of bad) {
      await expect(queue.setLimits(topic, limits as never)).rejects.toThrow(InvalidOptionError);
      expect(() => queue.consume(topic, () => undefined, limits as never)).toThrow(InvalidOptionError);
    }
    expect(await queue.limits(topic)).toEqual({});
    const partitioned = uniqueTopic();
    const wide = await fx.service({ topics: { [partitioned]: { partitions: 4 } } });
    await expect(wide.setLimits(partitioned, { globalConcurrency: 3 })).rejects.toThrow(/partition count/);
    await wide.setLimits(partitioned, { globalConcurrency: 6, rateLimit: { max: 100, perMs: 1_000 } });
    expect(await wide.limits(partitioned)).toEqual({ globalConcurrency: 6, rateLimit: { max: 100, perMs: 1_000 } });
    await wide.setLimits(partitioned, null);
    expect(await wide.limits(partitioned)).toEqual({});
  });
});

/** What rateRun saw: each delivery's start on the server clock, its group and the attempts seen. */
interface RateRun {
  serverStarts: number[];
  /** The same starts as their handlers saw them (Date.now() at the handler's start). */
  handlerStarts: number[];
  groups: (string | undefined)[];
  attempts: number[];
  /** Scripts run from the release to the last start (reserves, acks, heartbeats of every service). */
  scriptCalls: number;
  /** How many services consumed, and how many messages they started in all. */
  services: number;
  started: number;
  /** The worst event-loop delay of this process during the run (ms): its consumers' timers were late by up to that. */
  loopDelayMs: number;
}

/**
 * Pushes `count` messages (grouped by `groupOf`) to a paused topic and releases them 400 ms before a
 * window of the server clock ends (aligned to whole seconds, as fixed windows were): a fixed window
 * then fills at its end and the next one starts at once. Every service consumes; each start is
 * taken on the server clock from its acked event (see test/support/start-times.ts).
 */
async function rateRun(
  redis: TestClient,
  services: RedisAckQueueService[],
  topic: string,
  count: number,
  groupOf: (n: number) => string | undefined,
): Promise<RateRun> {
  const [first] = services;
  await first.pause(topic);
  await first.pushMany(
    topic,
    Array.from({ length: count }, (_, n) => ({ payload: n, group: groupOf(n) })),
  );
  const handled = new Map<string, { at: number; enqueuedAt: number; group?: string }>();
  const run: RateRun = {
    serverStarts: [],
    handlerStarts: [],
    groups: [],
    attempts: [],
    scriptCalls: 0,
    services: services.length,
    started: count,
    loopDelayMs: 0,
  };
  const subscriptions = services.map((service) =>
    service.events$.subscribe((event) => {
      const start = event.type === 'acked' ? handled.get(event.id!) : undefined;
      if (!start || event.topic !== topic) return;
      run.serverStarts.push(start.enqueuedAt + event.waitMs!);
      run.handlerStarts.push(start.at);
      run.groups.push(start.group);
    }),
  );
  const attempts = new Set<number>();
  for (const service of services) {
    service.consume(
      topic,
      (_payload, context) => {
        attempts.add(context.attempt);
        handled.set(context.id, { at: Date.now(), enqueuedAt: context.enqueuedAt, group: context.group });
      },
      { concurrency: 4 },
    );
  }
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const release = now - (now % 1000) + (now % 1000 < 500 ? 600 : 1600);
  await sleep(release - now);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const before = await commandCounts(redis);
  await first.resume(topic);
  await eventually(() => run.serverStarts.length === count, 60_000);
  run.scriptCalls = (await commandCounts(redis)).evalsha - before.evalsha;
  loop.disable();
  subscriptions.forEach((subscription) => subscription.unsubscribe());
  // Their idle looks would count in the later tests' command counts.
  await Promise.all(services.map((service) => service.close()));
  run.attempts = [...attempts];
  run.loopDelayMs = loop.max / 1e6;
  return run;
}

/**
 * Starts as fast as the limit lets them: the least span `max` per `perMs` allows from the first
 * start to the last is at least 95 % of the span seen. A consumer waits for the limit on a timer,
 * so each wait may also take the worst event-loop delay seen (a busy machine's, not the limit's).
 */
function expectNearTheLimit(run: RateRun, max: number, perMs: number): void {
  const starts = run.serverStarts;
  const span = Math.max(...starts) - Math.min(...starts);
  const waits = Math.floor((starts.length - 1) / max);
  // Waiting costs no polling: a few calls per service for each time the limit opens (a poll
  // every 20 ms would be hundreds a service), besides the work: under a rate limit a reserve
  // takes only what its free slots start at once (nothing waits in a prefetch), so each start
  // may cost its own reserve and its own ack call.
  const work = 2 * run.started;
  // And each service's history: one call a second at most while it counts.
  const history = run.services * (Math.ceil(span / 1000) + 2);
  expect(run.scriptCalls).toBeLessThanOrEqual((waits + 1) * run.services * 4 + work + history);
  expect(span).toBeLessThanOrEqual(leastSpanMs(starts.length, max, perMs) / 0.95 + waits * run.loopDelayMs);
}
