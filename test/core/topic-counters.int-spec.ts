import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** gauges().pushedTotal / ackedTotal: counters in Redis that every process shares (the dashboard's rates). */
describe('topic counters', () => {
  const fx = useRedis();

  it('counts stored pushes (not duplicates) and acks (not nacks, stale acks or cancels)', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 1, { id: 'a' });
    await queue.push(topic, 1, { id: 'a' });
    await queue.pushMany(topic, [
      { payload: 2, id: 'b' },
      { payload: 3, id: 'c' },
      { payload: 4, id: 'a' },
      { payload: 5 },
    ]);
    expect(await queue.gauges(topic)).toMatchObject({ pushedTotal: 4, ackedTotal: 0 });
    const [a, b, c] = await queue.reserve(topic, { count: 3 });
    expect(await queue.ack(a)).toBe(true);
    expect(await queue.ack(a)).toBe(false);
    await queue.nack(b, { delayMs: 0 });
    await queue.cancel(topic, c.id);
    expect(await queue.gauges(topic)).toMatchObject({ pushedTotal: 4, ackedTotal: 1 });
  });

  it('counts what consumers ack, kept completed or not, from every process', async () => {
    const topic = uniqueTopic();
    const [one, two] = [await fx.service(), await fx.service({ keepCompleted: true })];
    await one.pushMany(
      topic,
      Array.from({ length: 20 }, (_, i) => ({ payload: i })),
    );
    const consumers = [one, two].map((queue) => queue.consume(topic, () => undefined));
    await one.waitUntilIdle(topic);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(await two.gauges(topic)).toMatchObject({ pushedTotal: 20, ackedTotal: 20 });
  });

  it('adds up the partitions of a partitioned topic', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ topics: { [topic]: { partitions: 3 } } });
    await queue.pushMany(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ payload: i, id: `m${i}` })),
    );
    for (const message of await queue.reserve(topic, { count: 10 })) await queue.ack(message);
    expect(await queue.gauges(topic)).toMatchObject({ pushedTotal: 30, ackedTotal: 10 });
  });
});
