import { InvalidScheduleError, InvalidTopicError, QueueClosedError, type RedisAckQueueEvent } from '../../lib';
import { partitionOf } from '../../lib/engine/keys/partitions';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('runScheduleNow', () => {
  const fx = useRedis();
  afterEach(() => Promise.all(fx.services.map((service) => service.close(0))));

  it("pushes the schedule's payload and headers at once, and leaves its next tick as it was", async () => {
    const queue = await fx.service({ prefix: uniqueTopic('p') });
    const topic = uniqueTopic();
    const payload = { report: 'nightly', n: 1 };
    const stored = await queue.upsertSchedule(topic, 'nightly', { cron: '0 2 * * *', payload, headers: { h: 'v' } });
    const events: RedisAckQueueEvent[] = [];
    queue.events$.subscribe((event) => events.push(event));

    const pushed = await queue.runScheduleNow(topic, 'nightly');
    expect(pushed).toEqual({ id: expect.stringMatching(/^schedule:nightly@\d+$/) as unknown, duplicate: false });
    const [message] = await queue.reserve(topic);
    expect(message).toMatchObject({ id: pushed!.id, payload, headers: { h: 'v' } });
    expect(events).toContainEqual({ type: 'pushed', topic, id: pushed!.id });
    expect(await queue.schedules(topic)).toEqual([stored]);
  });

  it('routes the message to the partition of a partitioned topic that its consumers read', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ prefix: uniqueTopic('p'), topics: { [topic]: { partitions: 4 } } });
    await queue.upsertSchedule(topic, 'every', { everyMs: 3_600_000, payload: 'x' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await queue.runScheduleNow(topic, 'every'))!.id);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect(new Set(ids).size).toBe(5);
    // Stored where the topic's schedules live (partition 0), which consumers read like any other.
    for (const id of ids) expect(partitionOf(id, 4)).toBe(0);
    const reserved = await queue.reserve(topic, { count: 10 });
    expect(reserved.map((m) => m.id).sort()).toEqual([...ids].sort());
  });

  it('answers null for an unknown schedule and changes nothing; bad input throws a typed error', async () => {
    const prefix = uniqueTopic('p');
    const queue = await fx.service({ prefix });
    const topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'other', { everyMs: 3_600_000 });
    const before = await snapshotTopic(fx.redis, topic, prefix);
    expect(await queue.runScheduleNow(topic, 'missing')).toBeNull();
    await expect(queue.runScheduleNow('bad topic', 'x')).rejects.toBeInstanceOf(InvalidTopicError);
    await expect(queue.runScheduleNow(topic, 'bad name')).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.runScheduleNow(topic, 'a@b')).rejects.toBeInstanceOf(InvalidScheduleError);
    expect(await snapshotTopic(fx.redis, topic, prefix)).toEqual(before);
    await queue.close(0);
    await expect(queue.runScheduleNow(topic, 'missing')).rejects.toBeInstanceOf(QueueClosedError);
  });
});
