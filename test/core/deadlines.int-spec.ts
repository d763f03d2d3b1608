import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { InvalidOptionError, RedisAckQueueMetrics, type RedisAckQueueService } from '../../lib';
import type { RedisAckQueueEvent } from '../../lib';
import { ConsumerProcesses } from '../support/consumer-processes';
import { skewedClockEnv } from '../support/fake-clock';
import { eventually, snapshotTopic, type TestClient, uniqueTopic, useRedis } from '../support/queue-fixture';

/** The Redis server's clock (ms): the only clock deadlines are judged by. */
async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Waits until the server's clock is past `ms` (a deadline passes when now > deadline). */
async function serverPast(redis: TestClient, ms: number | undefined): Promise<void> {
  if (typeof ms !== 'number') throw new Error(`no deadline to wait for (${ms})`);
  await eventually(async () => (await serverNow(redis)) > ms, 60_000, 10);
}

const LEASE_MS = 60_000;

/**
 * A slow consumer by hand: leases one message at a time and "runs" it for `runMs`, until
 * `done()` says so. Each start is the reserve's own server time (its lease deadline less the
 * lease length: reserve.lua sets deadline = now + leaseMs), so no bound depends on how fast this
 * process runs.
 */
async function consumeSlowly(
  queue: RedisAckQueueService,
  topic: string,
  runMs: number,
  done: () => Promise<boolean>,
): Promise<Map<string, number>> {
  const starts = new Map<string, number>();
  for (;;) {
    const [message] = await queue.reserve(topic, { leaseMs: LEASE_MS });
    if (message) {
      starts.set(message.id, message.leaseDeadline - LEASE_MS);
      await new Promise((resolve) => setTimeout(resolve, runMs));
      await queue.ack(message);
    } else if (await done()) {
      return starts;
    } else {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

describe('start-by deadlines', () => {
  const fx = useRedis();
  const folder = mkdtempSync(join(tmpdir(), 'ackq-deadlines-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  /** Collects the `expired` events of a service. */
  const expiredEvents = (queue: RedisAckQueueService) => {
    const seen: RedisAckQueueEvent[] = [];
    queue.events$.subscribe((event) => event.type === 'expired' && seen.push(event));
    return seen;
  };

  it('by the server clock: producers 5 minutes behind, on time and ahead; none starts after its deadline, none expires before it', async () => {
    const queue = await fx.service({ logLevel: 'silent' });
    const topic = uniqueTopic('skew');
    // startBy = the producer's own Date.now() + ahead: with its clock 5 minutes off, some of these are past
    // by the server's clock (refused), some a second or two ahead (they expire behind the slow consumer),
    // some minutes ahead (they run); expiresInMs counts on the server's clock whatever the producer's.
    const plan = [
      ...[-301_000, -299_000, -1_000, 300, 1_000, 2_000, 299_000, 300_300, 301_000, 303_000].map((startByAheadMs) => ({
        startByAheadMs,
      })),
      ...[150, 600, 120_000].map((expiresInMs) => ({ expiresInMs })),
    ];
    const goFile = join(folder, `${topic}.go`);
    const producers = new ConsumerProcesses(
      { ...fx.consumerEnv, TOPIC: topic, PLAN: JSON.stringify(plan), GO_FILE: goFile, COUNT: '39', EVERY_MS: '5' },
      'producer-process.js',
    );
    const children = await Promise.all([-300_000, 0, 300_000].map((skew) => producers.start(skewedClockEnv(skew))));
    const pushedFrom = await serverNow(fx.redis);
    writeFileSync(goFile, '');
    const closed = Promise.all(
      children.map((child) => producers.waitFor((e) => e.type === 'closed' && e.pid === child.pid, 120_000)),
    );
    let producing = true;
    void closed.then(() => (producing = false));
    // The consumer comes late for the first 150 ms message of each producer (so some surely expire,
    // however fast this machine is), then runs slowly, 40 ms a message, while the rest arrive.
    const late = await Promise.all(
      children.map((child) => producers.waitFor((e) => e.pid === child.pid && e.expiresInMs === 150, 60_000)),
    );
    for (const { ids } of late) await serverPast(fx.redis, (await queue.get(topic, ids![0]))!.startBy);
    const starts = await consumeSlowly(queue, topic, 40, async () => {
      if (producing) return false;
      const { ready, delayed, leased } = await queue.stats(topic);
      return ready + delayed + leased === 0;
    });
    const pushedUntil = await serverNow(fx.redis);

    const pushed = producers.of('pushed');
    const refused = producers.of('refused');
    expect(pushed.length + refused.length).toBe(3 * 39);
    // Refused: a startBy the server's clock had passed when the producer pushed (none while it lay ahead).
    for (const r of refused) {
      expect(r.option).toBe('startBy');
      expect(r.startBy!).toBeLessThanOrEqual(pushedUntil);
    }
    // Each producer saw refusals and acceptances: the server judged its skewed times, not the producer.
    for (const child of children) {
      expect(producers.of('refused', child.pid).length).toBeGreaterThan(0);
      expect(producers.of('pushed', child.pid).length).toBeGreaterThan(0);
    }
    const letters = new Map((await queue.deadLetters(topic, { limit: 1000 })).map((d) => [d.id, d]));
    let ran = 0;
    let expired = 0;
    for (const p of pushed) {
      const id = p.ids![0];
      const start = starts.get(id);
      const letter = letters.get(id);
      // Exactly one of the two: it started, or it became a dead letter as expired.
      expect([id, start === undefined, letter === undefined]).toEqual([id, letter !== undefined, start !== undefined]);
      if (p.startBy !== undefined) {
        // A startBy accepted lay ahead of the server's clock at the push.
        expect(p.startBy).toBeGreaterThan(pushedFrom);
        if (start !== undefined) expect(start).toBeLessThanOrEqual(p.startBy);
        if (letter) expect(letter.deadAt).toBeGreaterThan(p.startBy);
      } else {
        // expiresInMs: from the push (its enqueue time, server clock).
        const deadline = (letter?.enqueuedAt ?? 0) + p.expiresInMs!;
        if (letter) expect(letter.deadAt).toBeGreaterThan(deadline);
      }
      if (letter) {
        expect(letter).toMatchObject({ reason: 'expired', error: 'the start-by deadline passed before it started' });
        expired++;
      } else ran++;
    }
    // Deadlines minutes ahead always run; the three the consumer came late for surely expired.
    expect(ran).toBeGreaterThan(0);
    expect(expired).toBeGreaterThanOrEqual(3);
    for (const { ids } of late) expect(letters.get(ids![0])).toMatchObject({ reason: 'expired' });
  }, 180_000);

  it('starts each message by its deadline and expires none before it, by the server clock (a slow consumer)', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    // One call: one enqueue time, so message i's deadline is enqueuedAt + 100 + 20 i.
    const results = await queue.pushMany(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ payload: i, expiresInMs: 100 + 20 * i })),
    );
    const { enqueuedAt } = (await queue.get(topic, results[0].id))!;
    const deadline = (id: string) => enqueuedAt! + 100 + 20 * results.findIndex((r) => r.id === id);
    const starts = await consumeSlowly(queue, topic, 25, async () => (await queue.stats(topic)).ready === 0);
    const letters = await queue.deadLetters(topic, { limit: 100 });
    expect(starts.size + letters.length).toBe(30);
    for (const [id, start] of starts) expect(start).toBeLessThanOrEqual(deadline(id));
    for (const letter of letters) expect(letter.deadAt).toBeGreaterThan(deadline(letter.id));
  });

  it('counts a delayed message from its due time: startBy is due + expiresInMs, and it expires once that passes', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const { id } = await queue.push(topic, 'later', { delayMs: 60_000, expiresInMs: 5_000 });
    const info = (await queue.get(topic, id))!;
    expect(info).toMatchObject({ state: 'delayed', onExpire: 'dead-letter' });
    expect(info.startBy).toBe(info.dueAt! + 5_000);
    const [listed] = await queue.list(topic, 'delayed');
    expect(listed).toMatchObject({ id, startBy: info.startBy, onExpire: 'dead-letter' });

    const short = await queue.push(topic, 'soon', { delayMs: 50, expiresInMs: 50 });
    const { startBy } = (await queue.get(topic, short.id))!;
    await serverPast(fx.redis, startBy);
    expect(await queue.reserve(topic)).toEqual([]);
    const letter = (await queue.get(topic, short.id))!;
    expect(letter).toMatchObject({ state: 'dead', reason: 'expired' });
    expect(letter.deadAt).toBeGreaterThan(startBy!);
    // A dead letter keeps no deadline: a requeue runs it.
    expect(letter.startBy).toBeUndefined();
    expect(await queue.requeueDead(topic, [short.id])).toBe(1);
    expect((await queue.reserve(topic)).map((m) => m.id)).toEqual([short.id]);
  });

  it("lets a group's next message start when its head expired, and sweeps expired ones out of their group", async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const events = expiredEvents(queue);
    const head = await queue.push(topic, 'head', { group: 'g', expiresInMs: 30 });
    const next = await queue.push(topic, 'next', { group: 'g' });
    await serverPast(fx.redis, (await queue.get(topic, head.id))!.startBy);
    // One reserve of one: the expired head ends and the group's next message starts in its place.
    expect((await queue.reserve(topic, { count: 1 })).map((m) => m.payload)).toEqual(['next']);
    expect(await queue.get(topic, head.id)).toMatchObject({ state: 'dead', reason: 'expired' });
    expect(events).toEqual([{ type: 'expired', topic, id: head.id, onExpire: 'dead-letter', reason: 'expired' }]);
    void next;

    // Waiting behind a running one: the sweep takes it out of its group.
    const other = uniqueTopic();
    await queue.push(other, 'runs', { group: 'h' });
    const waits = await queue.push(other, 'waits', { group: 'h', expiresInMs: 30 });
    // Read before any reserve: on a slow machine the reserve below may end it already.
    const { startBy } = (await queue.get(other, waits.id))!;
    const [running] = await queue.reserve(other);
    expect(running.payload).toBe('runs');
    await serverPast(fx.redis, startBy);
    expect(await queue.reserve(other)).toEqual([]);
    expect(await queue.get(other, waits.id)).toMatchObject({ state: 'dead', reason: 'expired' });
    expect(await queue.stats(other)).toMatchObject({ ready: 0, delayed: 0, leased: 1, dead: 1 });
    await queue.ack(running);
  });

  it('keeps the first deadline through retries: a retry past it never starts', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    /**
     * Pushes a message with a short expiresInMs and leases it before its deadline; a machine too slow
     * to do that in time tries again with twice as long, so the case never depends on its speed.
     */
    const leasedInTime = async (leaseMs = LEASE_MS) => {
      for (let ms = 300; ms < 120_000; ms *= 2) {
        const { id } = await queue.push(topic, ms, { expiresInMs: ms });
        const [message] = await queue.reserve(topic, { leaseMs });
        if (message) return { message, startBy: (await queue.get(topic, id))!.startBy! };
      }
      throw new Error('never leased before its deadline');
    };

    // Back to delayed for long after its deadline (nack): the sweep ends it there.
    const nacked = await leasedInTime();
    expect(nacked.message.attempt).toBe(1);
    expect(await queue.nack(nacked.message, { delayMs: 600_000 })).toBe('retry');
    expect((await queue.get(topic, nacked.message.id))!.startBy).toBe(nacked.startBy);
    await serverPast(fx.redis, nacked.startBy);
    expect(await queue.reserve(topic)).toEqual([]);
    const letter = (await queue.get(topic, nacked.message.id))!;
    expect(letter).toMatchObject({ state: 'dead', reason: 'expired', attempt: 1 });
    expect(letter.deadAt).toBeGreaterThan(nacked.startBy);

    // Released (a consumer's shutdown) and ready again: the start check ends it.
    const released = await leasedInTime();
    await queue.release(released.message);
    await serverPast(fx.redis, released.startBy);
    expect(await queue.reserve(topic)).toEqual([]);
    expect(await queue.get(topic, released.message.id)).toMatchObject({ state: 'dead', reason: 'expired' });

    // Its lease ran out (a consumer died): back in line, and ended, not started again.
    const lost = await leasedInTime(10);
    await serverPast(fx.redis, Math.max(lost.startBy, lost.message.leaseDeadline));
    expect(await queue.reserve(topic)).toEqual([]);
    expect(await queue.get(topic, lost.message.id)).toMatchObject({ state: 'dead', reason: 'expired', attempt: 1 });
  });

  it("fails a flow's parent when a child expires (onChildFailure 'fail'); 'continue' lets it run", async () => {
    const queue = await fx.service();
    const parents = uniqueTopic('parent');
    const children = uniqueTopic('child');
    await queue.pushFlow({
      topic: parents,
      id: 'failing',
      payload: 0,
      children: [{ topic: children, id: 'late-1', payload: 1, options: { expiresInMs: 30 } }],
    });
    await queue.pushFlow({
      topic: parents,
      id: 'going-on',
      payload: 0,
      children: [
        {
          topic: children,
          id: 'late-2',
          payload: 2,
          options: { expiresInMs: 30, onExpire: 'drop', onChildFailure: 'continue' },
        },
      ],
    });
    await serverPast(fx.redis, (await queue.get(children, 'late-1'))!.startBy);
    await serverPast(fx.redis, (await queue.get(children, 'late-2'))!.startBy);
    expect(await queue.reserve(children, { count: 5 })).toEqual([]);
    await eventually(async () => (await queue.get(parents, 'failing'))?.state === 'dead');
    expect(await queue.get(parents, 'failing')).toMatchObject({ reason: 'child-failed' });
    expect(await queue.get(children, 'late-2')).toBeNull();
    await eventually(async () => (await queue.get(parents, 'going-on'))?.state === 'ready');
    const [parent] = await queue.reserve(parents);
    expect(parent.id).toBe('going-on');
  });

  it("counts a flow parent's expiresInMs from when its children let it run", async () => {
    const queue = await fx.service();
    const parents = uniqueTopic('parent');
    const children = uniqueTopic('child');
    await queue.pushFlow({
      topic: parents,
      id: 'p',
      payload: 0,
      options: { expiresInMs: 60_000 },
      children: [{ topic: children, id: 'c', payload: 1 }],
    });
    // Waiting for its child: no deadline yet.
    expect(await queue.get(parents, 'p')).toMatchObject({ state: 'waiting-children' });
    expect((await queue.get(parents, 'p'))!.startBy).toBeUndefined();
    const [child] = await queue.reserve(children);
    const endedFrom = await serverNow(fx.redis);
    await queue.ack(child);
    await eventually(async () => (await queue.get(parents, 'p'))?.state === 'ready');
    const endedBy = await serverNow(fx.redis);
    const { startBy } = (await queue.get(parents, 'p'))!;
    expect(startBy).toBeGreaterThanOrEqual(endedFrom + 60_000);
    expect(startBy).toBeLessThanOrEqual(endedBy + 60_000);
  });

  it('follows a debounced message: its deadline moves with its due time, and once expired its key is free', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const debounce = { key: 'doc', delayMs: 100 };
    const first = await queue.push(topic, 1, { debounce, expiresInMs: 50 });
    const before = (await queue.get(topic, first.id))!;
    expect(before.startBy).toBe(before.dueAt! + 50);
    await queue.push(topic, 2, { debounce, expiresInMs: 50 });
    const moved = (await queue.get(topic, first.id))!;
    expect(moved.startBy).toBe(moved.dueAt! + 50);
    await serverPast(fx.redis, moved.startBy);
    expect(await queue.reserve(topic)).toEqual([]);
    expect(await queue.get(topic, first.id)).toMatchObject({ state: 'dead', reason: 'expired' });
    // The key left with its message: the next push is a new message.
    const again = await queue.push(topic, 3, { debounce });
    expect(again).toMatchObject({ duplicate: false });
    expect(again.id).not.toBe(first.id);
  });

  it("drops with onExpire 'drop': nothing is left, the event says so", async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const events = expiredEvents(queue);
    const { id } = await queue.push(topic, 'x', { expiresInMs: 20, onExpire: 'drop' });
    expect(await queue.get(topic, id)).toMatchObject({ onExpire: 'drop' });
    await serverPast(fx.redis, (await queue.get(topic, id))!.startBy);
    expect(await queue.reserve(topic)).toEqual([]);
    expect(await queue.get(topic, id)).toBeNull();
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
    expect(events).toEqual([{ type: 'expired', topic, id, onExpire: 'drop' }]);
    expect(await snapshotTopic(fx.redis, topic)).not.toHaveProperty([`{ackq:${topic}}:deadlines`]);
  });

  it('never starts one that expired while its topic was paused', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pause(topic);
    const { id } = await queue.push(topic, 'x', { expiresInMs: 30 });
    const plain = await queue.push(topic, 'plain');
    await serverPast(fx.redis, (await queue.get(topic, id))!.startBy);
    await queue.resume(topic);
    expect((await queue.reserve(topic, { count: 5 })).map((m) => m.id)).toEqual([plain.id]);
    expect(await queue.get(topic, id)).toMatchObject({ state: 'dead', reason: 'expired' });
  });

  it('ends expired messages behind a deep backlog over several sweeps, none of them started', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 2_000 }, (_, n) => ({ payload: n })),
    );
    const timed = await queue.pushMany(
      topic,
      Array.from({ length: 300 }, (_, n) => ({ payload: n, expiresInMs: 30 })),
    );
    const timedIds = new Set(timed.map(({ id }) => id));
    await serverPast(fx.redis, (await queue.get(topic, timed[299].id))!.startBy);
    // Each reserve sweeps (a bounded number of LIST scans a call) and leases one of the backlog.
    await eventually(async () => {
      for (const message of await queue.reserve(topic)) {
        expect(timedIds.has(message.id)).toBe(false);
        await queue.ack(message);
      }
      return (await queue.count(topic, 'dead')) === 300;
    });
    for (const { id } of timed) expect(await queue.get(topic, id)).toMatchObject({ state: 'dead', reason: 'expired' });
  });

  it('serves the next priority when a higher one expired', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const low = await queue.push(topic, 'low', { priority: 1 });
    const high = await queue.push(topic, 'high', { priority: 9, expiresInMs: 20 });
    await serverPast(fx.redis, (await queue.get(topic, high.id))!.startBy);
    expect((await queue.reserve(topic)).map((m) => m.id)).toEqual([low.id]);
    expect(await queue.get(topic, high.id)).toMatchObject({ state: 'dead', reason: 'expired' });
  });

  it('lets no stale schedule tick run after an outage of the consumers', async () => {
    const scheduler = await fx.service({ logLevel: 'silent' });
    const topic = uniqueTopic();
    const everyMs = 200;
    await scheduler.upsertSchedule(topic, 'tick', { everyMs, expiresInMs: everyMs, payload: 'tick' });
    expect((await scheduler.schedules(topic))[0]).toMatchObject({ expiresInMs: everyMs, onExpire: 'dead-letter' });
    // No consumer for at least four periods (server clock) after the first tick was pushed.
    const first = await eventually(async () => (await scheduler.list(topic, 'ready', { limit: 1 }))[0]);
    await serverPast(fx.redis, first.startBy! + 3 * everyMs);
    await scheduler.removeSchedule(topic, 'tick');
    const consumer = await fx.service();
    const starts = await consumeSlowly(consumer, topic, 0, async () => (await consumer.stats(topic)).ready === 0);
    const letters = await consumer.deadLetters(topic, { limit: 1000 });
    // The first tick certainly expired (nobody consumed before its deadline); later ones as time went.
    expect(letters.map((l) => l.id)).toContain(first.id);
    for (const letter of letters) {
      const tick = Number(letter.id.split(':')[2]);
      expect(letter.reason).toBe('expired');
      expect(letter.deadAt).toBeGreaterThan(tick + everyMs);
    }
    for (const [id, start] of starts) expect(start).toBeLessThanOrEqual(Number(id.split(':')[2]) + everyMs);
  });

  it('refuses bad deadlines with InvalidOptionError and stores nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'kept', { id: 'kept' });
    const before = await snapshotTopic(fx.redis, topic);
    const now = await serverNow(fx.redis);
    const refused = async (options: object, option: string) => {
      const failure = queue.push(topic, 'x', options);
      await expect(failure).rejects.toBeInstanceOf(InvalidOptionError);
      await expect(failure).rejects.toMatchObject({ option });
    };
    await refused({ startBy: now - 1_000 }, 'startBy');
    await refused({ startBy: new Date(now - 1) }, 'startBy');
    // Before it could start: a delay longer than the deadline is away.
    await refused({ startBy: now + 10_000, delayMs: 60_000 }, 'startBy');
    await refused({ startBy: 8.64e15 + 1 }, 'startBy');
    await refused({ startBy: now + 60_000, expiresInMs: 1_000 }, 'expiresInMs');
    await refused({ onExpire: 'drop' }, 'onExpire');
    await refused({ expiresInMs: 1_000, onExpire: 'later' }, 'onExpire');
    for (const expiresInMs of [0, -5, 1.5, Number.NaN, '100']) await refused({ expiresInMs }, 'expiresInMs');
    // One bad message refuses the whole call.
    await expect(
      queue.pushMany(topic, [
        { payload: 'a', expiresInMs: 1_000 },
        { payload: 'b', startBy: now - 1_000 },
      ]),
    ).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(queue.upsertSchedule(topic, 's', { everyMs: 1_000, expiresInMs: 0 })).rejects.toBeInstanceOf(
      InvalidOptionError,
    );
    await expect(queue.upsertSchedule(topic, 's', { everyMs: 1_000, onExpire: 'drop' })).rejects.toBeInstanceOf(
      InvalidOptionError,
    );
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('counts expired messages: the event (fleet events too), the metric by on_expire, the history (dead letters in dead too)', async () => {
    const queue = await fx.service({ fleetEvents: true });
    const registry = new Registry();
    const metrics = new RedisAckQueueMetrics(queue, { registry });
    try {
      const topic = uniqueTopic();
      const events = expiredEvents(queue);
      const fleet = firstValueFrom(
        queue.fleetEvents$({ from: 'start' }).pipe(
          filter((event) => event.topic === topic && event.type === 'expired'),
          take(2),
          toArray(),
        ),
      );
      const dead = await queue.push(topic, 'd', { expiresInMs: 20 });
      const dropped = await queue.push(topic, 'x', { expiresInMs: 20, onExpire: 'drop' });
      const startBys = await Promise.all([dead, dropped].map(async ({ id }) => (await queue.get(topic, id))!.startBy!));
      await serverPast(fx.redis, Math.max(...startBys));
      expect(await queue.reserve(topic)).toEqual([]);
      expect(events.map((e) => [e.id, e.onExpire])).toEqual([
        [dead.id, 'dead-letter'],
        [dropped.id, 'drop'],
      ]);
      expect((await fleet).map((e) => [e.id, e.onExpire, e.reason])).toEqual([
        [dead.id, 'dead-letter', 'expired'],
        [dropped.id, 'drop', undefined],
      ]);
      const text = await registry.metrics();
      expect(text).toContain(`redis_ack_queue_expired_total{topic="${topic}",on_expire="dead-letter"} 1`);
      expect(text).toContain(`redis_ack_queue_expired_total{topic="${topic}",on_expire="drop"} 1`);
      expect(text).toContain(`redis_ack_queue_dead_total{topic="${topic}"} 1`);
      await queue.close();
      const history = await (await fx.service()).history(topic);
      const sum = (name: 'expired' | 'dead') => history.points.reduce((n, p) => n + p[name], 0);
      expect([sum('expired'), sum('dead')]).toEqual([2, 1]);
    } finally {
      metrics.close();
    }
  });
});
