import type { RedisAckQueueService, ReservedMessage } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { untilConsumerBlocked } from '../support/waits';

/**
 * Every way a lease ends frees what it held: its group's slot (the group's next message
 * starts) and its globalConcurrency slot (a consumer waiting for one is woken at once, not
 * at the end of its 5 s wait).
 */
describe('lease endings free group and concurrency slots', () => {
  const fx = useRedis();
  afterEach(() => Promise.all(fx.services.map((service) => service.close(0))));

  /** A consumer that missed the wake-up of a freed slot waits 5 s: a gap well under that shows none was missed. */
  const WAKE_BOUND_MS = 2_500;
  const gapsOver = (times: number[], bound: number) => times.filter((t, i) => i > 0 && t - times[i - 1] > bound);

  it('keepCompleted: the messages of a group go on in order, one at a time', async () => {
    const queue = await fx.service({ keepCompleted: true });
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, n) => ({ payload: n, group: n % 2 ? 'odd' : 'even' })),
    );
    const order: number[] = [];
    let running = 0;
    let most = 0;
    const consumer = queue.consume<number>(
      topic,
      async (n) => {
        most = Math.max(most, ++running);
        order.push(n);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
      },
      { concurrency: 4 },
    );
    await eventually(() => order.length === 10, 20_000);
    await consumer.close();
    expect(order.filter((n) => n % 2 === 0)).toEqual([0, 2, 4, 6, 8]);
    expect(order.filter((n) => n % 2 === 1)).toEqual([1, 3, 5, 7, 9]);
    expect(most).toBeLessThanOrEqual(2);
    expect((await queue.gauges(topic)).completed).toBe(10);
  });

  it('keepCompleted with globalConcurrency 1: ten messages flow without waiting out a wake-up', async () => {
    const queue = await fx.service({ keepCompleted: true });
    const topic = uniqueTopic();
    await queue.setLimits(topic, { globalConcurrency: 1 });
    await queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, n) => ({ payload: n })),
    );
    const starts: number[] = [];
    const consumer = queue.consume(topic, () => void starts.push(Date.now()), { concurrency: 4 });
    await eventually(() => starts.length === 10, 60_000);
    await consumer.close();
    expect(gapsOver(starts, WAKE_BOUND_MS)).toEqual([]);
  });

  it.each([
    ['an ack', false, (q: RedisAckQueueService, m: ReservedMessage) => q.ack(m)],
    ['an ack that keeps the message completed', true, (q: RedisAckQueueService, m: ReservedMessage) => q.ack(m)],
    ['a nack with a backoff', false, (q: RedisAckQueueService, m: ReservedMessage) => q.nack(m, { delayMs: 600_000 })],
    ['a nack of the last attempt', false, (q: RedisAckQueueService, m: ReservedMessage) => q.nack(m, { delayMs: 0 })],
    ['a release', false, (q: RedisAckQueueService, m: ReservedMessage) => q.release(m)],
    ['a cancel', false, (q: RedisAckQueueService, m: ReservedMessage) => q.cancel(m.topic, m.id)],
  ])('globalConcurrency 1: %s wakes the consumer waiting for the slot', async (_case, keepCompleted, end) => {
    const topic = uniqueTopic();
    const owner = await fx.service({ keepCompleted, maxAttempts: _case === 'a nack of the last attempt' ? 1 : 5 });
    const waiter = await fx.service();
    await owner.setLimits(topic, { globalConcurrency: 1 });
    // Due later than any wait: a nack's retry is then not the earliest due, so it wakes no one by that.
    await owner.push(topic, 'later', { delayMs: 60_000 });
    await owner.push(topic, 'first');
    const [first] = await owner.reserve(topic, { leaseMs: 60_000 });
    await owner.push(topic, 'second');
    const handled: string[] = [];
    const consumer = waiter.consume<string>(topic, (payload) => void handled.push(payload));
    // The consumer finds no slot and waits for one.
    await untilConsumerBlocked(fx.nodes(), topic);
    const endedAt = Date.now();
    await end(owner, first);
    await eventually(() => handled.length > 0, 20_000);
    const waited = Date.now() - endedAt;
    await consumer.close();
    expect(handled[0]).toBe(_case === 'a release' ? 'first' : 'second');
    expect(waited).toBeLessThan(WAKE_BOUND_MS);
  });

  it('globalConcurrency 1: a retryLater wakes the consumer waiting for the slot', async () => {
    const topic = uniqueTopic();
    const owner = await fx.service();
    const waiter = await fx.service();
    await owner.setLimits(topic, { globalConcurrency: 1 });
    await owner.push(topic, 'later', { delayMs: 60_000 });
    await owner.push(topic, 'first');
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const deferring = owner.consume<string>(topic, async (_payload, context) => {
      started();
      await gate;
      context.retryLater(600_000);
    });
    await running;
    await owner.push(topic, 'second');
    const handled: string[] = [];
    const consumer = waiter.consume<string>(topic, (payload) => void handled.push(payload));
    await untilConsumerBlocked(fx.nodes(), topic);
    // The owner stops fetching (it would take the slot itself), then its handler defers.
    const closing = deferring.close();
    const endedAt = Date.now();
    letGo();
    await closing;
    await eventually(() => handled.length > 0, 20_000);
    const waited = Date.now() - endedAt;
    await consumer.close();
    expect(handled).toEqual(['second']);
    expect(waited).toBeLessThan(WAKE_BOUND_MS);
  });
});
