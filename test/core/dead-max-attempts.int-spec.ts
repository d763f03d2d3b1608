import { MessageRejectedError, type RedisAckQueueService } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** What get(), list('dead') and deadLetters() say of one dead letter's attempts. */
async function reported(queue: RedisAckQueueService, topic: string, id: string) {
  const info = await queue.get(topic, id);
  const [row] = (await queue.list(topic, 'dead')).filter((r) => r.id === id);
  const [letter] = (await queue.deadLetters(topic)).filter((l) => l.id === id);
  return {
    get: { state: info?.state, attempt: info?.attempt, maxAttempts: info?.maxAttempts },
    list: { attempt: row?.attempt, maxAttempts: row?.maxAttempts },
    deadLetters: { attempt: letter?.attempt, maxAttempts: letter?.maxAttempts },
  };
}

const same = (attempt: number, maxAttempts: number) => ({
  get: { state: 'dead', attempt, maxAttempts },
  list: { attempt, maxAttempts },
  deadLetters: { attempt, maxAttempts },
});

describe('the maxAttempts a dead letter reports is the one that applied to its deliveries', () => {
  const fx = useRedis();
  expectLogs(/failed on attempt/, /went to the dead letters as/);
  const backoff = { type: 'fixed' as const, delayMs: 1 };

  it("a consumer's (or @QueueHandler's) maxAttempts, not the service's", async () => {
    const queue = await fx.service({ backoff });
    const topic = uniqueTopic('dm.consumer');
    const consumer = queue.consume(topic, () => Promise.reject(new Error('always fails')), { maxAttempts: 2 });
    const { id } = await queue.push(topic, 'x');
    await eventually(async () => (await queue.stats(topic)).dead === 1);
    await consumer.close();
    expect(await reported(queue, topic, id)).toEqual(same(2, 2));
  });

  it("a message's own maxAttempts, over the consumer's", async () => {
    const queue = await fx.service({ backoff });
    const topic = uniqueTopic('dm.message');
    const consumer = queue.consume(topic, () => Promise.reject(new Error('always fails')), { maxAttempts: 2 });
    const { id } = await queue.push(topic, 'x', { maxAttempts: 3 });
    await eventually(async () => (await queue.stats(topic)).dead === 1);
    await consumer.close();
    expect(await reported(queue, topic, id)).toEqual(same(3, 3));
  });

  it("a rejected message's: its consumer's, with the attempt it died on", async () => {
    const queue = await fx.service({ backoff });
    const topic = uniqueTopic('dm.rejected');
    const consumer = queue.consume(topic, () => Promise.reject(new MessageRejectedError('not for us')), {
      maxAttempts: 2,
    });
    const { id } = await queue.push(topic, 'x');
    await eventually(async () => (await queue.stats(topic)).dead === 1);
    await consumer.close();
    expect(await reported(queue, topic, id)).toEqual(same(1, 2));
  });

  it("an expired message's: the maxAttempts of the reserve that found its last lease run out", async () => {
    const queue = await fx.service();
    const topic = uniqueTopic('dm.expired');
    const { id } = await queue.push(topic, 'x');
    await queue.reserve(topic, { leaseMs: 10, maxAttempts: 1 });
    // The next reserve after the lease ran out buries it: its one attempt is spent.
    await eventually(async () => {
      await queue.reserve(topic, { maxAttempts: 1 });
      return (await queue.stats(topic)).dead === 1;
    });
    expect(await reported(queue, topic, id)).toEqual(same(1, 1));
  });

  it("a record of an older release (no maxAttempts recorded) still reads: the body's own, else the service's", async () => {
    const queue = await fx.service({ maxAttempts: 4 });
    const topic = uniqueTopic('dm.old');
    const tag = `{ackq:${topic}}`;
    const info = (attempt: number) =>
      JSON.stringify({ r: 'failed', e: 'Error: old', a: attempt, t: 1_700_000_000_000 });
    // As 0.1.0 left them: a plain message, and one that carried its own maxAttempts.
    await fx.redis.hset(
      `${tag}:messages`,
      'plain',
      '{"t":1699999999000,"p":"x"}',
      'own',
      '{"t":1699999999000,"p":"y","m":7}',
    );
    await fx.redis.zadd(`${tag}:dead`, 1_700_000_000_000, 'plain', 1_700_000_000_001, 'own');
    await fx.redis.hset(`${tag}:dead-info`, 'plain', info(4), 'own', info(7));
    expect(await reported(queue, topic, 'plain')).toEqual({
      get: { state: 'dead', attempt: 4, maxAttempts: 4 },
      list: { attempt: 4, maxAttempts: 4 },
      deadLetters: { attempt: 4, maxAttempts: undefined },
    });
    expect(await reported(queue, topic, 'own')).toEqual(same(7, 7));
    expect(await queue.get(topic, 'plain')).toMatchObject({ reason: 'failed', error: 'Error: old', payload: 'x' });
  });

  it("a waiting message's: its own, else the asking service's consumer's, else the service's", async () => {
    const queue = await fx.service({ backoff, maxAttempts: 5 });
    const other = await fx.service({ maxAttempts: 5 }); // consumes nothing: knows only its default
    const topic = uniqueTopic('dm.waiting');
    await queue.pause(topic); // the consumer takes nothing: the messages stay ready
    const consumer = queue.consume(topic, () => undefined, { maxAttempts: 2 });
    const plain = await queue.push(topic, 'x');
    const own = await queue.push(topic, 'y', { maxAttempts: 7 });
    const ready = async (service: RedisAckQueueService) => ({
      get: [(await service.get(topic, plain.id))?.maxAttempts, (await service.get(topic, own.id))?.maxAttempts],
      list: (await service.list(topic, 'ready')).map(({ maxAttempts }) => maxAttempts),
    });
    expect(await ready(queue)).toEqual({ get: [2, 7], list: [2, 7] });
    expect(await ready(other)).toEqual({ get: [5, 7], list: [5, 7] });
    await consumer.close();
    expect(await ready(queue)).toEqual({ get: [5, 7], list: [5, 7] });
  });
});
