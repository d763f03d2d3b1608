import { InvalidTopicError, QueueClosedError } from '../../lib';
import { commandCounts, eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('topic registry', () => {
  const fx = useRedis();
  const sadds = async () => (await commandCounts(fx.redis)).sadd ?? 0;

  it('registers a topic on its first push, once per service, listed sorted', async () => {
    const queue = await fx.service({ prefix: 'reg1' });
    const [b, a] = [uniqueTopic('b'), uniqueTopic('a')];
    const before = await sadds();
    for (let i = 0; i < 5; i++) await queue.push(b, i);
    await queue.pushMany(b, [{ payload: 1 }, { payload: 2 }]);
    await Promise.all([queue.push(a, 1), queue.push(a, 2)]);
    expect((await sadds()) - before).toBe(2);
    expect(await queue.topics()).toEqual([a, b]);
    expect(await fx.redis.smembers('{reg1:}:topics')).toEqual(expect.arrayContaining([a, b]));
  });

  it('registers a topic on consume and on reserve', async () => {
    const queue = await fx.service({ prefix: 'reg2' });
    const [consumed, reserved] = [uniqueTopic('consumed'), uniqueTopic('reserved')];
    const consumer = queue.consume(consumed, () => undefined, { leaseMs: 600 });
    await queue.reserve(reserved);
    await eventually(async () => (await queue.topics()).includes(consumed));
    expect(await queue.topics()).toEqual([consumed, reserved].sort());
    await consumer.close();
  });

  it('keeps registries of other prefixes apart, and a partitioned topic is one entry', async () => {
    const topic = uniqueTopic('parted');
    const queue = await fx.service({ prefix: 'reg3', topics: { [topic]: { partitions: 3 } } });
    const other = await fx.service({ prefix: 'reg3other' });
    await queue.pushMany(
      topic,
      Array.from({ length: 9 }, (_, i) => ({ payload: i })),
    );
    expect(await queue.topics()).toEqual([topic]);
    expect(await other.topics()).toEqual([]);
  });

  it('forgetTopic removes the topic from the registry only; a later push registers it again', async () => {
    const queue = await fx.service({ prefix: 'reg4' });
    const topic = uniqueTopic();
    await queue.push(topic, 'kept');
    expect(await queue.forgetTopic(topic)).toBe(true);
    expect(await queue.forgetTopic(topic)).toBe(false);
    expect(await queue.topics()).toEqual([]);
    expect((await queue.stats(topic)).ready).toBe(1);
    await queue.push(topic, 'again');
    expect(await queue.topics()).toEqual([topic]);
  });

  it('rejects bad input and a closed service with typed errors, changing nothing', async () => {
    const queue = await fx.service({ prefix: 'reg5' });
    await expect(queue.forgetTopic('bad topic')).rejects.toBeInstanceOf(InvalidTopicError);
    await expect(queue.forgetTopic(42 as unknown as string)).rejects.toBeInstanceOf(InvalidTopicError);
    await expect(queue.push('bad topic', 1)).rejects.toBeInstanceOf(InvalidTopicError);
    expect(await queue.topics()).toEqual([]);
    await queue.close();
    await expect(queue.topics()).rejects.toBeInstanceOf(QueueClosedError);
    await expect(queue.forgetTopic('t')).rejects.toBeInstanceOf(QueueClosedError);
  });
});
