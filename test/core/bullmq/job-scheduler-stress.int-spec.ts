// Mirrors BullMQ's tests/job_scheduler_stress.test.ts as scenarios of this queue's public API.
// Here every service runs a scheduler that races for each tick, and one script pushes a tick's
// message only if the schedule still has the definition and pending tick that scheduler saw: so
// however many upserts race, each tick pushes exactly one message (id `schedule:<name>:<tick>`),
// and a changed definition applies from its next tick. `everyMs` does not start at once as
// BullMQ's `every` does: `runScheduleNow` is the way to get a message now.
import type { RedisAckQueueService } from '../../../lib';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';

/** The tick time in a schedule message's id. */
const tickOf = (id: string) => Number(id.split(':')[2]);

describe('BullMQ job_scheduler_stress, as racing upserts of schedules', () => {
  const fx = useRedis();
  // Each test's schedulers stop with it, so none ticks in the next one.
  afterEach(() => Promise.all(fx.services.map((service) => service.close(0))));

  /** Every message of `topic` ready now, acked, in serving order. */
  async function take(queue: RedisAckQueueService, topic: string): Promise<{ id: string; payload: unknown }[]> {
    const taken: { id: string; payload: unknown }[] = [];
    for (let batch = await queue.reserve(topic, { count: 100 }); batch.length > 0;) {
      for (const message of batch) {
        taken.push({ id: message.id, payload: message.payload });
        await queue.ack(message);
      }
      batch = await queue.reserve(topic, { count: 100 });
    }
    return taken;
  }

  it('job_scheduler_stress: "should upsert many times respecting the guarantees" — 60 racing upserts from three services: one schedule, each tick pushed once', async () => {
    const prefix = uniqueTopic('p');
    const services = await Promise.all([1, 2, 3].map(() => fx.service({ prefix })));
    const topic = uniqueTopic();
    await Promise.all(
      services.flatMap((service) =>
        Array.from({ length: 20 }, () => service.upsertSchedule(topic, 'racy', { everyMs: 100, payload: 'same' })),
      ),
    );
    expect(await services[1].schedules(topic)).toHaveLength(1);
    await eventually(async () => (await services[0].stats(topic)).ready >= 5);
    const ticks = (await take(services[0], topic)).map(({ id }) => tickOf(id));
    expect(new Set(ticks).size).toBe(ticks.length);
    ticks.forEach((tick, i) => i > 0 && expect(tick - ticks[i - 1]).toBe(100));
  });

  it('job_scheduler_stress: "should start processing a job as soon as it is upserted when using every" — here the first tick is the next whole multiple of everyMs; `runScheduleNow` pushes one at once and leaves the tick', async () => {
    const queue = await fx.service({ prefix: uniqueTopic('p') });
    const topic = uniqueTopic();
    const info = await queue.upsertSchedule(topic, 'minutely', { everyMs: 60_000, payload: 'tick' });
    expect(info.nextRunAt! % 60_000).toBe(0);
    const now = await queue.runScheduleNow(topic, 'minutely');
    expect(now?.duplicate).toBe(false);
    expect(now?.id).toMatch(/^schedule:minutely@\d+$/);
    expect((await take(queue, topic)).map(({ payload }) => payload)).toEqual(['tick']);
    expect((await queue.schedules(topic))[0].nextRunAt).toBe(info.nextRunAt);
  });

  it('job_scheduler_stress: "should properly update job data and options when upserting job scheduler multiple times" — ticks after the upsert carry the new payload, none the old', async () => {
    const queue = await fx.service({ prefix: uniqueTopic('p') });
    const topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'data', { everyMs: 100, payload: 'first' });
    await eventually(async () => (await queue.stats(topic)).ready >= 2);
    await queue.upsertSchedule(topic, 'data', { everyMs: 100, payload: 'second' });
    const firsts = (await queue.stats(topic)).ready;
    await eventually(async () => (await queue.stats(topic)).ready >= firsts + 2);
    const payloads = (await take(queue, topic)).map(({ payload }) => payload);
    // 'first' until the upsert, then only 'second': never back.
    const switched = payloads.indexOf('second');
    expect(switched).toBeGreaterThanOrEqual(2);
    expect(payloads.slice(0, switched).every((payload) => payload === 'first')).toBe(true);
    expect(payloads.slice(switched).every((payload) => payload === 'second')).toBe(true);
  });

  it('job_scheduler_stress: "should handle rapid successive upserts without creating duplicate schedulers" — the last definition stands and no tick runs twice', async () => {
    const queue = await fx.service({ prefix: uniqueTopic('p') });
    const topic = uniqueTopic();
    for (let i = 0; i < 30; i++) await queue.upsertSchedule(topic, 'rapid', { everyMs: i % 2 ? 100 : 200, payload: i });
    await queue.upsertSchedule(topic, 'rapid', { everyMs: 150, payload: 'last' });
    // A tick may run between the upsert and this read (its times move on): the definition is what must stand.
    const schedules = await queue.schedules(topic);
    expect(schedules).toEqual([expect.objectContaining({ name: 'rapid', everyMs: 150 })]);
    const taken: { id: string; payload: unknown }[] = [];
    const lastTicks = () => taken.filter(({ payload }) => payload === 'last').map(({ id }) => tickOf(id));
    await eventually(async () => {
      taken.push(...(await take(queue, topic)));
      return lastTicks().length >= 3;
    });
    const ticks = taken.map(({ id }) => tickOf(id));
    expect(new Set(ticks).size).toBe(ticks.length);
    // A tick already due at the last upsert runs once with the new definition; from the next one on,
    // the 'last' ticks are whole multiples of 150 ms, one each.
    const fromNext = lastTicks().slice(1);
    fromNext.forEach((tick, i) => {
      expect(tick % 150).toBe(0);
      if (i > 0) expect(tick - fromNext[i - 1]).toBe(150);
    });
  });
});
