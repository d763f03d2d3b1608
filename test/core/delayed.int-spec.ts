import { eventually, type TestClient, uniqueTopic, useRedis } from '../support/queue-fixture';

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('delayed messages', () => {
  const fx = useRedis();

  it('is never reserved before its due time and becomes ready on time', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const pushedAt = await serverNow(fx.redis);
    await queue.push(topic, 'later', { delayMs: 400 });
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 1 });
    const message = await eventually(async () => (await queue.reserve(topic))[0], 5_000, 5);
    const reservedAt = await serverNow(fx.redis);
    expect(reservedAt - pushedAt).toBeGreaterThanOrEqual(400);
    expect(message.payload).toBe('later');
  });

  it('counts a due message as ready in stats before any reserve moves it', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x', { delayMs: 50 });
    await eventually(async () => (await queue.stats(topic)).ready === 1);
    expect(await queue.stats(topic)).toMatchObject({ delayed: 0, ready: 1 });
  });

  it('takes availableAt as an absolute time', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const now = await serverNow(fx.redis);
    await queue.push(topic, 'past', { availableAt: new Date(now - 60_000) });
    await queue.push(topic, 'future', { availableAt: now + 60_000 });
    expect(await queue.stats(topic)).toMatchObject({ ready: 1, delayed: 1 });
    expect((await queue.reserve(topic, { count: 5 })).map((m) => m.payload)).toEqual(['past']);
  });

  it('releases due messages in due order, after those already ready', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    // One call, so one server time: the due order is the delays' order however slow the machine.
    await queue.pushMany(topic, [
      { payload: 'c', delayMs: 150 },
      { payload: 'b', delayMs: 100 },
      { payload: 'a', delayMs: 50 },
      { payload: 'now' },
    ]);
    await eventually(async () => (await queue.stats(topic)).ready === 4);
    expect((await queue.reserve(topic, { count: 4 })).map((m) => m.payload)).toEqual(['now', 'a', 'b', 'c']);
  });
});
