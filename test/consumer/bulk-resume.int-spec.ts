import type { RedisAckQueueService } from '../../lib';
import { ConsumerProcesses } from '../support/consumer-processes';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Pushes `n` messages tagged `tags` that die at their first failure; returns their ids. */
async function deadLetters(queue: RedisAckQueueService, topic: string, n: number, tags?: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let first = 0; first < n; first += 5_000) {
    const items = Array.from({ length: Math.min(5_000, n - first) }, (_, i) => ({
      payload: { i: first + i },
      maxAttempts: 1,
      ...(tags && { tags }),
    }));
    ids.push(...(await queue.pushMany(topic, items)).map((result) => result.id));
  }
  for (let left = n; left > 0;) {
    const batch = await queue.reserve(topic, { count: 1_000 });
    if (batch.length === 0) throw new Error('fewer messages reserved than pushed');
    await Promise.all(batch.map((message) => queue.nack(message, { error: 'seeded failure' })));
    left -= batch.length;
  }
  return ids;
}

describe('a bulk action survives the death of its runner', () => {
  const fx = useRedis();

  it('requeues 100,000 dead letters selected by tag exactly once though its runner is SIGKILLed midway, while pushes go on', async () => {
    const topic = uniqueTopic();
    // Dead letters kept beyond the default bound (10,000 a topic).
    const queue = await fx.service({ deadLetters: { maxCount: 1_000_000 } });
    const selected = await deadLetters(queue, topic, 100_000, ['tenant:42']);
    const otherTag = await deadLetters(queue, topic, 5_000, ['tenant:7']);
    const untagged = await deadLetters(queue, topic, 5_000);
    expect(await queue.count(topic, 'dead', { tag: 'tenant:42' })).toBe(100_000);

    const runners = new ConsumerProcesses(
      { ...fx.consumerEnv, TOPIC: topic, TAG: 'tenant:42', MAX_PER_SECOND: '10000' },
      'bulk-runner-process.js',
    );
    const pushed: string[] = [];
    let pushing = true;
    try {
      const runner = await runners.start();
      const { id, n } = runners.of('ready')[0];
      expect(n).toBe(100_000);

      // Pushes go on throughout; a consumer here counts every delivery by id (and its service
      // runs the bulk runner loop too, which takes the bulk action over once the lease lapses).
      const pushes = (async () => {
        for (let i = 0; pushing; i++) {
          pushed.push((await queue.push(topic, { live: i })).id);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const deliveries = new Map<string, number>();
      queue.consume(
        topic,
        (_payload, context) => {
          deliveries.set(context.id, (deliveries.get(context.id) ?? 0) + 1);
        },
        { concurrency: 50 },
      );

      // Killed midway: some done, most not.
      await eventually(async () => ((await queue.bulkStatus(id!))!.processed >= 20_000 ? true : undefined), 60_000, 20);
      await runners.kill(runner);
      const atKill = (await queue.bulkStatus(id!))!;
      expect(atKill.state).toBe('running');
      expect(atKill.processed).toBeLessThan(100_000);

      const done = await eventually(
        async () => {
          const status = await queue.bulkStatus(id!);
          return status?.state === 'done' ? status : undefined;
        },
        120_000,
        100,
      );
      expect(done).toMatchObject({ selected: 100_000, processed: 100_000, skipped: 0 });
      pushing = false;
      await pushes;
      await queue.waitUntilIdle(topic, { timeoutMs: 120_000 });

      // Each selected dead letter was requeued once: delivered once, and no other was touched.
      const twice = selected.filter((m) => deliveries.get(m) !== 1);
      expect(twice.slice(0, 5).map((m) => [m, deliveries.get(m)])).toEqual([]);
      expect(pushed.filter((m) => deliveries.get(m) !== 1)).toEqual([]);
      expect(deliveries.size).toBe(selected.length + pushed.length);
      expect(await queue.count(topic, 'dead')).toBe(10_000);
      expect(await queue.count(topic, 'dead', { tag: 'tenant:7' })).toBe(5_000);
      const stillDead = new Set((await queue.deadLetters(topic, { limit: 10_000 })).map((m) => m.id));
      expect([...otherTag, ...untagged].every((m) => stillDead.has(m))).toBe(true);
    } finally {
      pushing = false;
      await runners.stopAll();
    }
  }, 900_000);
});
