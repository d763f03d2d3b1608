import { InvalidOptionError, RetryLaterError, type MessageContext, type RedisAckQueueEvent } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('retry later', () => {
  const fx = useRedis();

  it('defers without counting the attempt, by context.retryLater or by throwing RetryLaterError', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const events: RedisAckQueueEvent[] = [];
    queue.events$.subscribe((e) => e.type === 'deferred' && events.push(e));
    const attempts: number[] = [];
    const consumer = queue.consume(topic, (_payload, context: MessageContext) => {
      attempts.push(context.attempt);
      if (attempts.length === 1) context.retryLater(20);
      if (attempts.length === 2) throw new RetryLaterError(20);
      if (attempts.length === 3) {
        // Caught by the handler: the deferral holds all the same.
        try {
          context.retryLater(20);
        } catch {
          return;
        }
      }
    });
    await queue.push(topic, 'x');
    await eventually(() => attempts.length === 4);
    await eventually(async () => (await queue.stats(topic)).leased === 0);
    expect(attempts).toEqual([1, 1, 1, 1]);
    expect(events.map((e) => [e.type, e.attempt, e.delayMs])).toEqual([
      ['deferred', 1, 20],
      ['deferred', 1, 20],
      ['deferred', 1, 20],
    ]);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    // The deferral count left with the message.
    expect(await fx.redis.exists(`{ackq:${topic}}:deferrals`)).toBe(0);
    await consumer.close();
  });

  it('counts deferrals past maxDeferrals as attempts, up to the dead letters', async () => {
    expectLogs(/deferred 2 times/, /dead-lettered|Dead-lettered|dead letter/i, /Retrying|retry/i);
    const queue = await fx.service({ maxAttempts: 2, maxDeferrals: 2 });
    const topic = uniqueTopic();
    const attempts: number[] = [];
    const consumer = queue.consume(topic, (_payload, context) => {
      attempts.push(context.attempt);
      context.retryLater(0);
    });
    await queue.push(topic, 'x');
    await eventually(async () => (await queue.stats(topic)).dead === 1);
    // Two free deferrals, then each counts: attempt 1 (counted), attempt 2 (counted: dead).
    expect(attempts).toEqual([1, 1, 1, 2]);
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ reason: 'failed', attempt: 2 });
    await consumer.close();
  });

  it('takes maxDeferrals per handler and refuses bad values', async () => {
    const queue = await fx.service();
    expect(() => queue.consume(uniqueTopic(), () => undefined, { maxDeferrals: -1 })).toThrow(InvalidOptionError);
    expect(() => new RetryLaterError(-5)).toThrow(InvalidOptionError);
    expect(() => new RetryLaterError(1.5)).toThrow(InvalidOptionError);
    const topic = uniqueTopic();
    const attempts: number[] = [];
    expectLogs(/deferred 0 times/, /Retrying|retry/i);
    const consumer = queue.consume(
      topic,
      (_payload, context) => {
        attempts.push(context.attempt);
        if (context.attempt === 1) context.retryLater(0);
      },
      { maxDeferrals: 0 },
    );
    await queue.push(topic, 'x');
    await eventually(() => attempts.length === 2);
    expect(attempts).toEqual([1, 2]);
    await consumer.close();
  });

  it('changes nothing for a stale token', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    const [message] = await queue.reserve(topic, { leaseMs: 600 });
    await fx.redis.hset(`{ackq:${topic}}:tokens`, message.id, 'someone-else.1');
    const engine = (queue as unknown as { core: { engine: { defer: (...a: unknown[]) => Promise<string> } } }).core
      .engine;
    expect(await engine.defer(topic, message, 10, 100)).toBe('lost');
    expect(await queue.stats(topic)).toMatchObject({ leased: 1, delayed: 0 });
    expect(await fx.redis.exists(`{ackq:${topic}}:deferrals`)).toBe(0);
  });

  it('keeps the priority level and works on a partitioned topic', async () => {
    const topic = uniqueTopic('defer');
    const queue = await fx.service({ topics: { [topic]: { partitions: 3 } } });
    const seen: string[] = [];
    const consumer = queue.consume<string>(topic, (payload, context) => {
      seen.push(`${payload}:${context.attempt}`);
      if (!seen.includes(`${payload}:again`)) {
        seen.push(`${payload}:again`);
        context.retryLater(10);
      }
    });
    await queue.pushMany(topic, [{ payload: 'a', priority: 3 }, { payload: 'b' }, { payload: 'c', priority: 9 }]);
    await eventually(async () => seen.length === 9 && (await queue.stats(topic)).leased === 0);
    expect(seen.filter((s) => s.endsWith(':1')).sort()).toEqual(['a:1', 'a:1', 'b:1', 'b:1', 'c:1', 'c:1']);
    await consumer.close();
  });
});
