// Mirrors BullMQ's tests/job_scheduler.test.ts as scenarios of this queue's public API
// (`upsertSchedule`, `schedules`, `runScheduleNow`, `removeSchedule`). Here each tick pushes one
// message whose id is `schedule:<name>:<tick>`, ticks are due on the Redis server's clock, `everyMs`
// ticks at whole multiples of itself since the epoch (or `startAt`) instead of at once, and a
// schedule's pending tick lives in the schedule, not as a delayed job anyone could remove.
import { InvalidScheduleError, type RedisAckQueueService } from '../../../lib';
import { expectLogs } from '../../support/capture-logs';
import { eventually, type TestClient, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { quietFor } from '../../support/waits';

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The tick time in a schedule message's id. */
const tickOf = (id: string) => Number(id.split(':')[2]);

describe('BullMQ job_scheduler, as schedules', () => {
  const fx = useRedis();
  expectLogs(/went to the dead letters|failed/);
  // Each test's schedulers stop with it, so none ticks in the next one.
  afterEach(() => Promise.all(fx.services.map((service) => service.close(0))));

  /** A service under a prefix of its own, so no other test's schedules tick in it. */
  const isolated = (): Promise<RedisAckQueueService> => fx.service({ prefix: uniqueTopic('p') });

  /** Every message of `topic` ready now, acked; their ids. */
  async function take(queue: RedisAckQueueService, topic: string): Promise<string[]> {
    const ids: string[] = [];
    for (let batch = await queue.reserve(topic, { count: 100 }); batch.length > 0;) {
      for (const message of batch) {
        ids.push(message.id);
        await queue.ack(message);
      }
      batch = await queue.reserve(topic, { count: 100 });
    }
    return ids;
  }

  it('job_scheduler: "it should stop repeating after endDate" — no tick after `endAt`, and `nextRunAt` becomes null', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    const endAt = (await serverNow(fx.redis)) + 450;
    await queue.upsertSchedule(topic, 'bounded', { everyMs: 100, endAt });
    await eventually(async () => (await queue.schedules(topic))[0].nextRunAt === null);
    await quietFor(300, 'a tick after endAt');
    const ticks = (await take(queue, topic)).map(tickOf);
    expect(ticks.length).toBeGreaterThan(0);
    expect(Math.max(...ticks)).toBeLessThanOrEqual(endAt);
  });

  it('job_scheduler: "should create multiple jobs" (same pattern, different job scheduler id) — each schedule pushes its own message per tick', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'one', { everyMs: 200, payload: 'one' });
    await queue.upsertSchedule(topic, 'two', { everyMs: 200, payload: 'two' });
    await eventually(async () => (await queue.stats(topic)).ready >= 4);
    const ids = await take(queue, topic);
    const ticksOf = (name: string) => ids.filter((id) => id.startsWith(`schedule:${name}:`)).map(tickOf);
    expect(ticksOf('one').length).toBeGreaterThanOrEqual(1);
    // Both tick at the same whole multiples of 200 ms: a tick of one is a tick of the other.
    const shared = ticksOf('one').filter((tick) => ticksOf('two').includes(tick));
    expect(shared.length).toBeGreaterThanOrEqual(1);
  });

  it('job_scheduler: "should create only one job scheduler" (same id, different every) — the second upsert replaces the first', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'job', { everyMs: 3_600_000 });
    const changed = await queue.upsertSchedule(topic, 'job', { everyMs: 60_000 });
    // Matched by definition: its times may move on if a tick runs between the upsert and the read.
    expect(await queue.schedules(topic)).toEqual([expect.objectContaining({ name: 'job', everyMs: 60_000 })]);
    expect(changed.everyMs).toBe(60_000);
    expect(changed.nextRunAt! % 60_000).toBe(0);
  });

  it('job_scheduler: "throws an error" (endDate not greater than now) — here an `endAt` in the past is kept with no next tick; `endAt` before `startAt` is refused', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    const now = await serverNow(fx.redis);
    const past = await queue.upsertSchedule(topic, 'over', { everyMs: 100, endAt: now - 1_000 });
    expect(past.nextRunAt).toBeNull();
    await quietFor(300, 'a tick of a schedule that ended');
    expect(await queue.stats(topic)).toMatchObject({ ready: 0 });
    await expect(
      queue.upsertSchedule(topic, 'backwards', { everyMs: 100, startAt: now + 2_000, endAt: now + 1_000 }),
    ).rejects.toThrow(InvalidScheduleError);
  });

  it('job_scheduler: "should return undefined" (job scheduler does not exist) — and "returns false" (repeatable job does not exist): `runScheduleNow` answers null, `removeSchedule` false', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    expect(await queue.runScheduleNow(topic, 'none')).toBeNull();
    expect(await queue.removeSchedule(topic, 'none')).toBe(false);
    expect(await queue.schedules(topic)).toEqual([]);
  });

  it('job_scheduler: "should continue repeating" (when repeatable job fails) — a tick\'s message dead-lettered does not stop the next ticks', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    const runs: string[] = [];
    const consumer = queue.consume(
      topic,
      (_payload, context) => {
        runs.push(context.id);
        throw new Error('failed for good');
      },
      { maxAttempts: 1 },
    );
    await queue.upsertSchedule(topic, 'flaky', { everyMs: 150 });
    await eventually(() => runs.length >= 3);
    await consumer.close();
    expect(new Set(runs).size).toBe(runs.length);
    expect((await queue.deadLetters(topic)).length).toBeGreaterThanOrEqual(3);
  });

  it('job_scheduler: "should throw an error when using .pattern and .every simultaneously" — and "…when not specifying .pattern or .every": refused, nothing stored', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    const both = { cron: '* * * * *', everyMs: 1_000 } as unknown as { everyMs: number };
    await expect(queue.upsertSchedule(topic, 'both', both)).rejects.toBeInstanceOf(InvalidScheduleError);
    const neither = {} as unknown as { everyMs: number };
    await expect(queue.upsertSchedule(topic, 'neither', neither)).rejects.toBeInstanceOf(InvalidScheduleError);
    expect(await queue.schedules(topic)).toEqual([]);
  });

  it('job_scheduler: "should repeat 7:th day every month at 9:25" — a cron of that pattern is next due on a 7th at 09:25 in its time zone (UTC by default)', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    const { nextRunAt } = await queue.upsertSchedule(topic, 'monthly', { cron: '25 9 7 * *' });
    const next = new Date(nextRunAt!);
    expect([next.getUTCDate(), next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([7, 9, 25, 0]);
    expect(nextRunAt!).toBeGreaterThan(await serverNow(fx.redis));
  });

  it('job_scheduler: "should repeat every 2 seconds with startDate in future" — the first tick is `startAt`, then every `everyMs` from it', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    const startAt = (await serverNow(fx.redis)) + 300;
    const info = await queue.upsertSchedule(topic, 'later', { everyMs: 200, startAt });
    expect(info.nextRunAt).toBe(startAt);
    await eventually(async () => (await queue.stats(topic)).ready >= 2);
    const ticks = (await take(queue, topic)).map(tickOf);
    expect(ticks[0]).toBe(startAt);
    ticks.forEach((tick, i) => expect(tick).toBe(startAt + i * 200));
  });

  it('job_scheduler: "should allow adding a repeatable job after removing it" — a removed schedule upserted again ticks again', async () => {
    const queue = await isolated();
    const topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'again', { everyMs: 150 });
    expect(await queue.removeSchedule(topic, 'again')).toBe(true);
    await queue.upsertSchedule(topic, 'again', { everyMs: 150 });
    await eventually(async () => (await queue.stats(topic)).ready >= 1);
    expect((await take(queue, topic))[0]).toMatch(/^schedule:again:\d+$/);
  });
});
