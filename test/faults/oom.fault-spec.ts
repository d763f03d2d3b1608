import { RedisCommandError, type QueueConsumer } from '../../lib';
import { FaultLedger, finishScenario, hold, produce } from '../support/fault-ledger';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { wellBefore } from '../support/waits';

describe('fault: maxmemory reached with noeviction', () => {
  const fx = useRedis({ config: ['maxmemory-policy', 'noeviction'] });

  it('push fails with RedisCommandError OOM, stored messages stay intact, and everything resumes once memory is raised', async () => {
    const topic = uniqueTopic('oom');
    const ledger = new FaultLedger();
    const producer = await fx.service();
    const body = 'x'.repeat(1000);
    // A first lot, queued before the limit.
    await produce(producer, topic, ledger, {
      total: 300,
      batch: 50,
      everyMs: 0,
      idPrefix: 'before',
      payload: () => body,
    });
    const used = Number(/used_memory:(\d+)/.exec(await fx.redis.info('memory'))![1]);
    await fx.redis.config('SET', 'maxmemory', String(used + 512 * 1024));

    // Fill up, one push at a time, until Redis refuses (bounded: 512 KiB is ~400 pushes of 1 KB).
    let refusal: unknown;
    let filled = 0;
    for (let i = 0; i < 5000 && refusal === undefined; i++) {
      try {
        await producer.push(topic, body, { id: `fill-${i}` });
        ledger.pushedIds([`fill-${i}`]);
        filled++;
      } catch (error) {
        refusal = error;
      }
    }
    expect(refusal).toBeInstanceOf(RedisCommandError);
    expect(refusal).toMatchObject({ redisCode: 'OOM', operation: 'push', topic });
    expect((refusal as Error).message).toMatch(/OOM/);
    expect(filled).toBeGreaterThan(0);

    // Redis keeps refusing pushes while full.
    const refusedAgain = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        producer.push(topic, body, { id: `refused-${i}` }).then(
          () => null,
          (e: unknown) => e,
        ),
      ),
    );
    // Redis's own memory moves a little while full (client buffers shrink under load), so a push may
    // fit now and then: each one is either stored (and counted) or refused with the typed OOM error.
    refusedAgain.forEach((e, i) => e === null && ledger.pushedIds([`refused-${i}`]));
    const refusals = refusedAgain.filter((e) => e !== null);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.every((e) => e instanceof RedisCommandError && e.redisCode === 'OOM')).toBe(true);
    const consumerService = await fx.service({ leaseMs: 2000 });
    ledger.follow(consumerService, 'c1', topic);
    const consumerErrors: string[] = [];
    consumerService.events$.subscribe((e) => e.type === 'error' && consumerErrors.push(e.error?.message ?? ''));
    let consumer: QueueConsumer | undefined;
    const resumedAt: number[] = [];
    try {
      consumer = consumerService.consume(
        topic,
        async (_payload, context) => {
          resumedAt.push(Date.now());
          ledger.start('c1', context.id, context.attempt);
          await hold(2);
        },
        { concurrency: 8 },
      );
      // Consuming is how a full queue drains itself: the consumer works at the limit, pushes stay refused.
      await eventually(async () => (await producer.stats(topic)).ready === 0, 30_000);
      expect(consumerErrors).toEqual([]);

      // Memory is raised: pushes work again and the consumer drains everything by itself.
      const raisedAt = Date.now();
      await fx.redis.config('SET', 'maxmemory', '0');
      const drainedStarts = resumedAt.length;
      await produce(producer, topic, ledger, {
        total: 100,
        batch: 20,
        everyMs: 0,
        idPrefix: 'after',
        payload: () => body,
      });
      const pushMs = Date.now() - raisedAt;
      await producer.waitUntilIdle(topic, { timeoutMs: 30_000 });
      // The first start after the raise (those before it drained the full queue).
      const resumeMs = resumedAt[drainedStarts] - raisedAt;
      const tally = await finishScenario(fx.redis, topic, ledger, 'oom-noeviction', {
        details: { filled, resumeMs, pushMs },
      });
      expect(tally.handled).toBe(300 + filled + 100);
      expect(tally.duplicates).toBe(0);
      // The idle consumer is woken by the pushes: it starts well before its idle wait would end
      // after them (the pushes' own measured time is not the consumer's).
      expect(resumeMs).toBeLessThan(pushMs + wellBefore(DEFAULTS.idleWaitMs));
    } finally {
      await fx.redis.config('SET', 'maxmemory', '0');
      await consumer?.close();
    }
  }, 60_000);

  // At the limit Redis refuses only push: acks, heartbeats, releases and purges free memory, so
  // their scripts carry `allow-oom` and the queue can drain itself.
  it('acks, lease extensions, releases and purges (which free memory) still work at the limit', async () => {
    const topic = uniqueTopic('oom-settle');
    const queue = await fx.service();
    await queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ id: `m${i}`, payload: 'x'.repeat(1000) })),
    );
    const leased = await queue.reserve(topic, { count: 10, leaseMs: 60_000 });
    await queue.nack(leased.pop()!, { delayMs: 0 });
    await queue.pushMany(topic, [{ id: 'doomed', payload: 1, maxAttempts: 1 }]);
    const doomed = (await queue.reserve(topic, { count: 2, leaseMs: 60_000 })).find((m) => m.id === 'doomed')!;
    await queue.nack(doomed, { error: new Error('to the dead letters') });
    const used = Number(/used_memory:(\d+)/.exec(await fx.redis.info('memory'))![1]);
    await fx.redis.config('SET', 'maxmemory', String(used + 64 * 1024));
    try {
      let full = false;
      for (let i = 0; i < 2000 && !full; i++) {
        full = await queue.push(topic, 'y'.repeat(1000)).then(
          () => false,
          (e: unknown) => e instanceof RedisCommandError && e.redisCode === 'OOM',
        );
      }
      expect(full).toBe(true);
      const outcomes = await Promise.all([
        queue.extendLease(leased[0], 60_000).then(String, (e: Error) => e.message),
        queue.ack(leased[1]).then(String, (e: Error) => e.message),
        queue.release(leased[2]).then(String, (e: Error) => e.message),
        queue.nack(leased[3], { delayMs: 0 }).then(String, (e: Error) => e.message),
        queue.purgeDead(topic).then(String, (e: Error) => e.message),
      ]);
      expect(outcomes).toEqual(['true', 'true', 'true', 'retry', '1']);
    } finally {
      await fx.redis.config('SET', 'maxmemory', '0');
    }
  });
});
