import { InvalidOptionError, InvalidTopicError, MessageRejectedError } from '../../lib';
import type { TopicHistory } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

type Count = 'pushed' | 'acked' | 'retried' | 'dead' | 'cancelled';
const total = (history: TopicHistory, name: Count) => history.points.reduce((sum, p) => sum + p[name], 0);
const totals = (history: TopicHistory) => ({
  pushed: total(history, 'pushed'),
  acked: total(history, 'acked'),
  retried: total(history, 'retried'),
  dead: total(history, 'dead'),
  cancelled: total(history, 'cancelled'),
});
const recorded = (history: TopicHistory) => history.points.filter((p) => p.pushed + p.acked + p.retried + p.dead > 0);

/**
 * queue.history(): every process counts what it pushed, settled and cancelled per minute of the
 * server's clock and adds it to Redis once a second and at close(); a read merges the minutes
 * into steps. Closing the services that recorded makes the counts final, so nothing here waits
 * on the flush timer but the last test, which waits for it on purpose.
 */
describe('history', () => {
  const fx = useRedis();

  it('counts pushes, acks, retries, dead letters and cancels as they happened, with wait and handling times', async () => {
    const topic = uniqueTopic('history');
    const producer = await fx.service({ logLevel: 'silent' });
    const consumerSide = await fx.service({ logLevel: 'silent' });
    await producer.pushMany(topic, [
      ...Array.from({ length: 30 }, (_, i) => ({ payload: { i }, id: `ok-${i}` })),
      { payload: { fail: true }, id: 'fails' },
      { payload: { reject: true }, id: 'rejected' },
      { payload: { i: 99 }, id: 'ok-0' }, // a duplicate: not stored, not counted
    ]);
    await producer.push(topic, { later: 1 }, { id: 'cancel-1', delayMs: 600_000 });
    await producer.push(topic, { later: 2 }, { id: 'cancel-2', delayMs: 600_000 });
    await producer.cancel(topic, 'cancel-1');
    await producer.cancel(topic, 'cancel-2');
    await producer.cancel(topic, 'cancel-2'); // gone already: nothing cancelled
    const consumer = consumerSide.consume(
      topic,
      async (payload: { fail?: boolean; reject?: boolean; i?: number }) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (payload.fail) throw new Error('fails every time');
        if (payload.reject) throw new MessageRejectedError('not for us');
      },
      { concurrency: 8, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } },
    );
    await consumerSide.waitUntilIdle(topic);
    await consumer.close();
    await Promise.all([producer.close(), consumerSide.close()]);

    const reader = await fx.service();
    const history = await reader.history(topic);
    expect(totals(history)).toEqual({ pushed: 34, acked: 30, retried: 1, dead: 2, cancelled: 2 });
    const points = recorded(history);
    const handling = points.reduce((sum, p) => sum + p.handling.count, 0);
    const waits = points.reduce((sum, p) => sum + p.wait.count, 0);
    // 30 acked, the failing one twice (retried, then dead), the rejected one once.
    expect(handling).toBe(33);
    expect(waits).toBe(33);
    for (const point of points.filter((p) => p.handling.count > 0)) {
      // Every handler waited 30 ms: a bucket's value is within 10 % of what it holds.
      expect(point.handling.p50).toBeGreaterThanOrEqual(27);
      expect(point.handling.p50!).toBeLessThanOrEqual(point.handling.p95!);
      expect(point.handling.p95!).toBeLessThanOrEqual(point.handling.p99!);
      // A 30 ms timer may fire up to a millisecond before performance.now() has moved 30 ms (Node
      // schedules it from the loop's cached time, in whole ms): 29.86 ms was seen on a busy machine.
      expect(point.handling.mean).toBeGreaterThanOrEqual(29);
    }
    // Another topic has nothing.
    expect(totals(await reader.history(uniqueTopic('quiet')))).toEqual({
      pushed: 0,
      acked: 0,
      retried: 0,
      dead: 0,
      cancelled: 0,
    });
  });

  it('counts acks and nacks of reserve() by hand, and what reserve sends to the dead letters (malformed, last lease expired)', async () => {
    const topic = uniqueTopic('by-hand');
    const queue = await fx.service({ logLevel: 'silent' });
    await queue.pushMany(topic, [
      { payload: 1, id: 'a' },
      { payload: 2, id: 'b' },
      { payload: 3, id: 'c', maxAttempts: 1 },
      { payload: 4, id: 'damaged' },
    ]);
    await fx.redis.hset(`{ackq:${topic}}:messages`, 'damaged', 'not a body');
    const reserved = await queue.reserve(topic, { count: 4 });
    expect(reserved.map((m) => m.id).sort()).toEqual(['a', 'b', 'c']);
    const byId = new Map(reserved.map((m) => [m.id, m]));
    await queue.ack(byId.get('a')!);
    await queue.ack(byId.get('a')!); // a stale ack: not counted
    // The last lease of one runs out: the next reserve sends it to the dead letters in Redis.
    await queue.push(topic, 5, { id: 'expires', maxAttempts: 1 });
    expect(await queue.reserve(topic, { leaseMs: 10 })).toHaveLength(1);
    await eventually(async () => {
      expect(await queue.reserve(topic)).toEqual([]);
      return (await queue.stats(topic)).dead === 2 || undefined;
    });
    await queue.nack(byId.get('b')!, { delayMs: 0 });
    await queue.nack(byId.get('c')!, { delayMs: 0 });
    await queue.close();
    const history = await (await fx.service()).history(topic);
    expect(totals(history)).toEqual({ pushed: 5, acked: 1, retried: 1, dead: 3, cancelled: 0 });
  });

  it('merges what several services record into the same minutes, and one history for a partitioned topic', async () => {
    const topic = uniqueTopic('partitioned');
    const options = { topics: { [topic]: { partitions: 3 } }, logLevel: 'silent' as const };
    const services = [await fx.service(options), await fx.service(options), await fx.service(options)];
    for (const [i, service] of services.entries())
      await service.pushMany(
        topic,
        Array.from({ length: 10 * (i + 1) }, (_, k) => ({ payload: k })),
      );
    const consumers = services.map((service) => service.consume(topic, () => undefined, { concurrency: 4 }));
    await services[0].waitUntilIdle(topic);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    await Promise.all(services.map((service) => service.close()));
    const history = await (await fx.service(options)).history(topic);
    expect(totals(history)).toMatchObject({ pushed: 60, acked: 60 });
    expect(recorded(history).reduce((sum, p) => sum + p.handling.count, 0)).toBe(60);
  });

  it('answers one point per step over the range asked, on the server clock, oldest first', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    await queue.pushMany(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ payload: i })),
    );
    await queue.close();
    const reader = await fx.service();
    const serverNow = await serverTime();
    const lastHour = await reader.history(topic);
    expect(lastHour.stepMs).toBe(60_000);
    expect(lastHour.points).toHaveLength(60);
    expect(lastHour.to - lastHour.from).toBe(60 * 60_000);
    expect(lastHour.points.map((p) => p.at)).toEqual(Array.from({ length: 60 }, (_, i) => lastHour.from + i * 60_000));
    // The last step is the server's current minute (or the next, if it turned meanwhile).
    expect(lastHour.points[59].at).toBeGreaterThanOrEqual(serverNow - (serverNow % 60_000));
    // lastMs: the range that ends with to's step, on the server's clock.
    const day = await reader.history(topic, { lastMs: 86_400_000, stepMs: 900_000 });
    expect(day.points).toHaveLength(96);
    expect(day.points[95].at).toBeGreaterThanOrEqual(serverNow - (serverNow % 900_000));
    expect(total(day, 'pushed')).toBe(5);
    const before = serverNow - 600_000;
    const fiveMinutes = await reader.history(topic, { to: before, lastMs: 300_000 });
    expect(fiveMinutes.points.map((p) => p.at)).toEqual(
      Array.from({ length: 5 }, (_, i) => before - (before % 60_000) - (4 - i) * 60_000),
    );
    expect(total(lastHour, 'pushed')).toBe(5);

    const pushedAt = recorded(lastHour)[0].at;
    const hours = await reader.history(topic, { stepMs: 3_600_000, from: pushedAt - 86_400_000, to: pushedAt });
    expect(hours.points).toHaveLength(25);
    expect(hours.points.every((p) => p.at % 3_600_000 === 0)).toBe(true);
    expect(total(hours, 'pushed')).toBe(5);

    // A range ending before the push has none of it; one after now stops at now.
    expect(total(await reader.history(topic, { to: pushedAt - 60_000 }), 'pushed')).toBe(0);
    const future = await reader.history(topic, { from: pushedAt, to: serverNow + 86_400_000 });
    expect(future.points.at(-1)!.at).toBeLessThanOrEqual(serverNow + 60_000);
    // A start older than what is kept (25 hours) starts at the oldest minute kept.
    const all = await reader.history(topic, { from: 0, stepMs: 60_000 });
    expect(all.points.length).toBeLessThanOrEqual(1501);
    expect(all.from).toBeGreaterThan(serverNow - 25 * 3_600_000 - 60_000);
    expect(total(all, 'pushed')).toBe(5);
  });

  it('refuses bad input with a typed error and writes nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic('bad');
    const bad: unknown[] = [
      { stepMs: 30_000 },
      { stepMs: 90_000 },
      { stepMs: 0 },
      { stepMs: 26 * 3_600_000 },
      { stepMs: '60000' },
      { from: -1 },
      { from: 1.5 },
      { to: Number.NaN },
      { from: '2026-01-01' },
      { from: 2_000_000, to: 1_000_000 },
      { lastMs: 59_999 },
      { lastMs: 26 * 3_600_000 },
      { lastMs: '1h' },
      { from: 1_000_000, lastMs: 3_600_000 },
      42,
    ];
    for (const options of bad)
      await expect(queue.history(topic, options as never)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(queue.history('no spaces')).rejects.toBeInstanceOf(InvalidTopicError);
    expect(await fx.redis.exists(`{ackq:${topic}}:history`)).toBe(0);
  });

  it('records nothing from a service with history: false', async () => {
    const topic = uniqueTopic('off');
    const queue = await fx.service({ history: false });
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }]);
    const consumer = queue.consume(topic, () => undefined);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    await queue.close();
    expect(total(await (await fx.service()).history(topic), 'pushed')).toBe(0);
    expect(await fx.redis.exists(`{ackq:${topic}}:history`)).toBe(0);
    await expect(fx.service({ history: 'yes' as never })).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('adds what a running service counted within about a second, without close()', async () => {
    const topic = uniqueTopic('live');
    const queue = await fx.service();
    const reader = await fx.service();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    // The recorder sends once a second: poll until it did (the bound is only a net against a hang).
    const deadline = Date.now() + 30_000;
    let pushed = 0;
    while (pushed < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      pushed = total(await reader.history(topic), 'pushed');
    }
    expect(pushed).toBe(3);
  });

  async function serverTime(): Promise<number> {
    const [seconds, micros] = await (fx.nodes()[0] ?? fx.redis).time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
});
