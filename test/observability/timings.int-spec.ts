import { firstValueFrom } from 'rxjs';
import { filter, take, toArray } from 'rxjs/operators';
import type { RedisAckQueueEvent } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

const settled = (topic: string) => (e: RedisAckQueueEvent) =>
  e.topic === topic && ['acked', 'retried', 'dead'].includes(e.type);

describe('timings in events', () => {
  const fx = useRedis();

  it('acked carries the handler duration and the wait from push to reserve', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x');
    // Nobody consumes for 150 ms: that is the wait.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const event = firstValueFrom(queue.events$.pipe(filter(settled(topic))));
    const consumer = queue.consume(topic, () => new Promise((resolve) => setTimeout(resolve, 80)));
    const acked = await event;
    await consumer.close();
    expect(acked.type).toBe('acked');
    expect(acked.durationMs).toBeGreaterThanOrEqual(75);
    expect(acked.durationMs).toBeLessThan(1_000);
    expect(acked.waitMs).toBeGreaterThanOrEqual(145);
    expect(acked.waitMs).toBeLessThan(2_000);
  });

  it('retried and dead carry the duration and the wait of their delivery, after the first attempt too', async () => {
    expectLogs(/failed on attempt/, /went to the dead letters/);
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'x', { maxAttempts: 2 });
    const events = firstValueFrom(queue.events$.pipe(filter(settled(topic)), take(2), toArray()));
    const consumer = queue.consume(
      topic,
      () => new Promise((_resolve, reject) => setTimeout(() => reject(new Error('no')), 30)),
      { backoff: { type: 'fixed', delayMs: 10 } },
    );
    const [retried, dead] = await events;
    await consumer.close();
    expect(retried).toMatchObject({ type: 'retried', attempt: 1 });
    expect(retried.durationMs).toBeGreaterThanOrEqual(25);
    expect(retried.waitMs).toBeGreaterThanOrEqual(0);
    expect(dead).toMatchObject({ type: 'dead', attempt: 2 });
    expect(dead.durationMs).toBeGreaterThanOrEqual(25);
    // From the retry's due time (see queue-events.int-spec.ts), where it used to be absent.
    expect(dead.waitMs).toBeGreaterThanOrEqual(0);
  });
});
