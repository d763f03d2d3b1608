import type { RedisAckQueueOptions, RedisAckQueueService } from '../../lib';
import { SCHEDULE_POLL_MS } from '../../lib/consumer/scheduler-loop';
import { partitionOf } from '../../lib/engine/keys/partitions';
import { CATCH_UP_AFTER_MS } from '../../lib/queue/schedules/schedule-times';
import { commandCounts, eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';
import { quietFor } from '../support/waits';

describe('schedules', () => {
  const fx = useRedis();
  // Each test's schedulers stop with it, so none ticks (or sends commands) in the next one.
  afterEach(() => Promise.all(fx.services.map((service) => service.close(0))));

  /** A service with a prefix of its own, so no other test's schedules tick in it. */
  async function isolated(
    options: RedisAckQueueOptions = {},
  ): Promise<{ queue: RedisAckQueueService; prefix: string }> {
    const prefix = options.prefix ?? uniqueTopic('p');
    return { queue: await fx.service({ ...options, prefix }), prefix };
  }

  async function serverNow(): Promise<number> {
    const [seconds, micros] = await fx.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Takes every ready message of `topic`; returns their ids and payloads. */
  async function take(
    queue: RedisAckQueueService,
    topic: string,
  ): Promise<{ id: string; payload: unknown; enqueuedAt: number }[]> {
    const taken: { id: string; payload: unknown; enqueuedAt: number }[] = [];
    for (;;) {
      const batch = await queue.reserve(topic, { count: 100, leaseMs: 600_000 });
      if (batch.length === 0) return taken;
      for (const message of batch) {
        taken.push({ id: message.id, payload: message.payload, enqueuedAt: message.enqueuedAt });
        await queue.ack(message);
      }
    }
  }

  const tickOf = (id: string) => Number(id.split(':')[2].split('#')[0]);

  it('upserts, lists (by topic and over every topic) and removes schedules', async () => {
    // No scheduler here: at a minute's turn one would run the tick and move nextRunAt under the test.
    const { queue } = await isolated({ scheduler: false });
    const [a, b] = [uniqueTopic('a'), uniqueTopic('b')];
    const before = await serverNow();
    const minute = await queue.upsertSchedule(a, 'minute', { everyMs: 60_000, payload: { n: 1 } });
    expect(minute).toEqual({ topic: a, name: 'minute', everyMs: 60_000, nextRunAt: minute.nextRunAt });
    expect(typeof minute.nextRunAt).toBe('number');
    expect(minute.nextRunAt! % 60_000).toBe(0);
    expect(minute.nextRunAt!).toBeGreaterThan(before);
    expect(minute.nextRunAt!).toBeLessThanOrEqual(before + 61_000);
    await queue.upsertSchedule(b, 'nightly', { cron: '0 2 * * *', tz: 'Europe/Berlin' });

    expect(await queue.schedules(a)).toEqual([minute]);
    const all = await queue.schedules();
    expect(all.map((s) => [s.topic, s.name, s.cron, s.tz])).toEqual([
      [a, 'minute', undefined, undefined],
      [b, 'nightly', '0 2 * * *', 'Europe/Berlin'],
    ]);
    // The same definition again changes nothing: its pending tick stays.
    expect(await queue.upsertSchedule(a, 'minute', { everyMs: 60_000, payload: { n: 1 } })).toEqual(minute);

    expect(await queue.removeSchedule(a, 'minute')).toBe(true);
    expect(await queue.removeSchedule(a, 'minute')).toBe(false);
    expect(await queue.schedules(a)).toEqual([]);
    expect((await queue.schedules()).map((s) => s.topic)).toEqual([b]);
  });

  it('pushes one message per tick, with an id made of the schedule and the tick time', async () => {
    const { queue } = await isolated();
    const topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'fast', { everyMs: 250, payload: { hello: 1 }, headers: { from: 'cron' } });
    await eventually(async () => (await queue.stats(topic)).ready >= 3);
    const [first] = await queue.reserve(topic);
    expect(first.id).toMatch(/^schedule:fast:\d+$/);
    expect(tickOf(first.id) % 250).toBe(0);
    expect(first.payload).toEqual({ hello: 1 });
    expect(first.headers).toEqual({ from: 'cron' });
    const [info] = await queue.schedules(topic);
    expect(info.lastRunAt).toBeGreaterThanOrEqual(tickOf(first.id));
    expect(info.nextRunAt).toBe(info.lastRunAt! + 250);
  });

  it('runs every tick exactly once with several schedulers racing for it', async () => {
    const prefix = uniqueTopic('p');
    const queues = await Promise.all([1, 2, 3].map(() => fx.service({ prefix })));
    const topic = uniqueTopic();
    await queues[0].upsertSchedule(topic, 'race', { everyMs: 200 });
    // The others run theirs too: each one's scheduler starts with a consumer.
    const consumers = queues.slice(1).map((q) => q.consume(uniqueTopic('other'), () => undefined));
    await eventually(async () => (await queues[0].stats(topic)).ready >= 10, 15_000);
    const ticks = (await take(queues[0], topic)).map(({ id }) => tickOf(id));
    expect(new Set(ticks).size).toBe(ticks.length);
    ticks.forEach((tick, i) => i > 0 && expect(tick - ticks[i - 1]).toBe(200));
    await Promise.all(consumers.map((c) => c.close()));
  });

  it('applies a change from the next tick, and a removal drops the pending tick', async () => {
    const { queue, prefix } = await isolated();
    const topic = uniqueTopic();
    const hourly = await queue.upsertSchedule(topic, 'job', { everyMs: 3_600_000, payload: 'old' });
    const changed = await queue.upsertSchedule(topic, 'job', { everyMs: 200, payload: 'new' });
    expect(changed.nextRunAt).toBeLessThan(hourly.nextRunAt!);
    await eventually(async () => (await queue.stats(topic)).ready >= 2);
    expect((await take(queue, topic)).every(({ payload }) => payload === 'new')).toBe(true);

    expect(await queue.removeSchedule(topic, 'job')).toBe(true);
    await take(queue, topic);
    await quietFor(700, 'a tick of a removed schedule');
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0 });
    expect(Object.keys(await snapshotTopic(fx.redis, topic, prefix))).not.toContain(expect.stringMatching(/schedule/));
  });

  it('ticks only from startAt to endAt', async () => {
    const { queue } = await isolated();
    const topic = uniqueTopic();
    const startAt = (await serverNow()) + 500;
    const info = await queue.upsertSchedule(topic, 'bounded', { everyMs: 200, startAt, endAt: startAt + 400 });
    expect(info.nextRunAt).toBe(startAt);
    await eventually(async () => (await queue.schedules(topic))[0].nextRunAt === null);
    expect((await take(queue, topic)).map(({ id }) => tickOf(id))).toEqual([startAt, startAt + 200, startAt + 400]);
  });

  it('after every scheduler was down, runs only the most recent missed tick, then ticks on', async () => {
    const prefix = uniqueTopic('p');
    const topic = uniqueTopic();
    const producer = await fx.service({ prefix, scheduler: false });
    const { nextRunAt: missedFrom } = await producer.upsertSchedule(topic, 'job', { everyMs: 200 });
    // No scheduler runs: several periods pass, more than the catch-up bound.
    await quietFor(CATCH_UP_AFTER_MS + 800, 'a tick while no scheduler runs');
    expect((await producer.stats(topic)).ready).toBe(0);

    const restartedAt = await serverNow();
    const restarted = await fx.service({ prefix });
    // The same definition again keeps the pending (missed) tick: a restart does not skip it.
    expect((await restarted.upsertSchedule(topic, 'job', { everyMs: 200 })).nextRunAt).toBe(missedFrom);
    await eventually(async () => (await producer.stats(topic)).ready >= 4);
    const taken = await take(producer, topic);
    const ticks = taken.map(({ id }) => tickOf(id));
    // One catch-up tick: the last one due when the restarted scheduler chose it, nothing from the
    // missed stretch before it. It chose after the restart, by its reading of the server clock,
    // which trails the server by at most a reply's transit (one period allowed for it); it pushed
    // later still, so the push time bounds it from above but not from below on a busy machine.
    expect(ticks[0]).toBeGreaterThan(missedFrom! + CATCH_UP_AFTER_MS);
    expect(ticks[0]).toBeLessThanOrEqual(taken[0].enqueuedAt);
    expect(ticks[0]).toBeGreaterThan(restartedAt - 2 * 200);
    ticks.forEach((tick, i) => i > 0 && expect(tick - ticks[i - 1]).toBe(200));
  });

  it('pushes the ticks of a partitioned topic into the partition its ids route to, exactly once', async () => {
    const topic = uniqueTopic();
    const { queue } = await isolated({ topics: { [topic]: { partitions: 4 } } });
    const handled: string[] = [];
    const consumer = queue.consume(topic, (_payload, context) => void handled.push(context.id));
    await queue.upsertSchedule(topic, 'spread', { everyMs: 200 });
    await eventually(() => handled.length >= 4);
    await consumer.close();
    expect(new Set(handled).size).toBe(handled.length);
    for (const id of handled) {
      expect(id).toMatch(/^schedule:spread:\d+(#\d+)?$/);
      expect(partitionOf(id, 4)).toBe(0);
    }
    const ticks = handled.map(tickOf).sort((x, y) => x - y);
    ticks.forEach((tick, i) => i > 0 && expect(tick - ticks[i - 1]).toBe(200));
  });

  it('costs an idle scheduler about one command every two seconds', async () => {
    // History off and the other services closed: the count is the scheduler's alone.
    await fx.closeServices();
    const { queue } = await isolated({ history: false });
    await queue.upsertSchedule(uniqueTopic(), 'hourly', { everyMs: 3_600_000 });
    // Measure from steady state: two polls in a row that ran nothing but their GET of the version.
    // The scheduler may have read the version before the upsert bumped it; the first poll that
    // reads the new one reloads the schedule right after its GET, which a loaded machine can delay
    // past any fixed number of GETs. An idle poll followed by another proves the reload is done.
    // What a connection costs (its handshake, a client's slots refresh, replication) is not the scheduler's.
    const connectionLevel =
      /^(client\||cluster|command|info$|replconf$|psync$|sync$|auth$|hello$|select$|readonly$|ping$)/;
    const counted = (counts: Record<string, number>) =>
      Object.entries(counts)
        .filter(([name]) => !connectionLevel.test(name))
        .reduce((sum, [, count]) => sum + count, 0);
    let before = await commandCounts(fx.redis);
    let idlePolls = 0;
    await eventually(
      async () => {
        const now = await commandCounts(fx.redis);
        const polled = (now.get ?? 0) - (before.get ?? 0);
        if (polled === 0) return false;
        idlePolls = polled === 1 && counted(now) - counted(before) === 1 ? idlePolls + 1 : 0;
        before = now;
        return idlePolls >= 2;
      },
      30_000,
      50,
    );
    const startedAt = Date.now();
    await quietFor(6_000, 'an idle scheduler sending more than a command every two seconds');
    const after = await commandCounts(fx.redis);
    // A loaded machine may stretch the wait: the polls it allows follow from the time that passed.
    const polls = Math.ceil((Date.now() - startedAt) / SCHEDULE_POLL_MS);
    const sent = Object.fromEntries(
      Object.keys(after)
        .map((name) => [name, after[name] - (before[name] ?? 0)] as const)
        .filter(([name, count]) => count > 0 && counted({ [name]: count }) > 0),
    );
    const total = counted(after) - counted(before);
    expect(total <= polls + 1 ? 'within' : `${total} commands for ${polls} polls: ${JSON.stringify(sent)}`).toBe(
      'within',
    );
  });
});
