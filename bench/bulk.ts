// Bulk actions by filter: how fast a bulk requeue of tagged dead letters runs, and what it leaves
// of the topic's own traffic. On a private redis-server: DEAD dead letters tagged `bench` (and as
// many untagged, which it must leave alone) are requeued with maxPerSecond 1,000,000 on an idle
// topic (the rate, goal >= 20,000/s); then the topic's own traffic (one producer pushing batches,
// one consumer acking them) is measured for SECONDS alone, and again while a bulk requeue at the
// default pace (50,000/s) runs on it. The requeued messages are consumed by the same consumer, so
// "own traffic" counts the messages the producer pushed meanwhile.
// Run: npm run bench:bulk [-- --dead=100000 --seconds=5 --quick]
import { cpus, loadavg } from 'node:os';
import { RedisAckQueueService } from '../lib';
import { cpuModel, libVersion } from './machine';
import { BenchRedis } from './redis-server';

const quick = process.argv.includes('--quick');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const DEAD = arg('dead', quick ? 20_000 : 100_000);
const SECONDS = arg('seconds', quick ? 2 : 5);
const TAG = 'bench';

/** Pushes `n` messages (tagged or not) and makes each a dead letter through reserve and nack. */
async function seedDead(queue: RedisAckQueueService, topic: string, n: number, tagged: boolean): Promise<void> {
  for (let first = 0; first < n; first += 5_000) {
    const count = Math.min(5_000, n - first);
    await queue.pushMany(
      topic,
      Array.from({ length: count }, (_, i) => ({
        payload: { i: first + i },
        maxAttempts: 1,
        ...(tagged && { tags: [TAG] }),
      })),
    );
  }
  for (let left = n; left > 0;) {
    const batch = await queue.reserve(topic, { count: 1_000 });
    await Promise.all(batch.map((message) => queue.nack(message, { error: 'seeded' })));
    left -= batch.length;
  }
}

/** Runs a bulk requeue by tag to its end; resolves with its rate (messages/s, wall clock). */
async function requeueAll(queue: RedisAckQueueService, topic: string, maxPerSecond: number) {
  const startedAt = Date.now();
  const { id, selected } = await queue.bulk(topic, { action: 'requeue', filter: { tag: TAG }, maxPerSecond });
  const selectedAt = Date.now();
  for (;;) {
    const status = (await queue.bulkStatus(id))!;
    if (status.state === 'done') {
      const ms = Date.now() - startedAt;
      return {
        selected,
        processed: status.processed,
        ms,
        selectMs: selectedAt - startedAt,
        rate: (selected * 1000) / ms,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The topic's own traffic for `seconds`: pushed and consumed (of those pushed now) per second. */
async function traffic(queue: RedisAckQueueService, topic: string, seconds: number, during?: Promise<unknown>) {
  let pushed = 0;
  let consumed = 0;
  let all = 0;
  let running = true;
  const consumer = queue.consume(
    topic,
    (payload: { live?: boolean }) => {
      all++;
      if (payload.live) consumed++;
    },
    { concurrency: 100 },
  );
  const producer = (async () => {
    while (running) {
      await queue.pushMany(
        topic,
        Array.from({ length: 100 }, () => ({ payload: { live: true } })),
      );
      pushed += 100;
    }
  })();
  const startedAt = Date.now();
  // The window ends after `seconds`, or when the bulk action it measures beside ends.
  const window = new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  await (during ? Promise.race([window, during]) : window);
  const ms = Date.now() - startedAt;
  running = false;
  await producer;
  await consumer.close();
  return {
    pushedPerSecond: (pushed * 1000) / ms,
    consumedPerSecond: (consumed * 1000) / ms,
    allPerSecond: (all * 1000) / ms,
    ms,
  };
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const startLoad = loadavg();
  try {
    const queue = new RedisAckQueueService({
      connection: redis.url,
      logLevel: 'error',
      deadLetters: { maxCount: 10 * DEAD },
      history: false,
    });
    await queue.connect();
    const idle = `bench.bulk.idle.${Date.now()}`;
    await seedDead(queue, idle, DEAD, true);
    await seedDead(queue, idle, Math.min(DEAD, 10_000), false);
    const alone = await requeueAll(queue, idle, 1_000_000);
    const leftDead = (await queue.stats(idle)).dead;

    const busy = `bench.bulk.busy.${Date.now()}`;
    const without = await traffic(queue, busy, SECONDS);
    await seedDead(queue, busy, DEAD, true);
    const bulk = requeueAll(queue, busy, 50_000);
    const withBulk = await traffic(queue, busy, SECONDS, bulk);
    const underTraffic = await bulk;
    await queue.close();

    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    process.stdout.write(
      `bulk requeue by tag, ${n(DEAD)} dead letters (and ${n(Math.min(DEAD, 10_000))} untagged, left alone: ${n(leftDead)} still dead)\n` +
        `  idle topic, maxPerSecond 1,000,000: ${n(alone.rate)} messages/s (${n(alone.ms)} ms, of which selection ${n(alone.selectMs)} ms) ` +
        `${alone.rate >= 20_000 ? '(goal >= 20,000/s met)' : '(goal >= 20,000/s NOT met)'}\n` +
        `  under traffic, maxPerSecond 50,000: ${n(underTraffic.rate)} messages/s\n` +
        `topic's own traffic (1 producer of 100-message batches, 1 consumer at concurrency 100), ${SECONDS} s windows\n` +
        `  without a bulk action: pushed ${n(without.pushedPerSecond)}/s, consumed ${n(without.consumedPerSecond)}/s\n` +
        `  while a bulk requeue runs: pushed ${n(withBulk.pushedPerSecond)}/s, consumed ${n(withBulk.consumedPerSecond)}/s ` +
        `of them (and ${n(withBulk.allPerSecond - withBulk.consumedPerSecond)}/s requeued ones) ` +
        `(${((withBulk.pushedPerSecond / without.pushedPerSecond) * 100).toFixed(0)} % / ` +
        `${((withBulk.consumedPerSecond / without.consumedPerSecond) * 100).toFixed(0)} % of the idle figures, over ${n(withBulk.ms)} ms)\n` +
        `machine: ${cpuModel()}, ${cpus().length} cores, load average ${startLoad.map((l) => l.toFixed(2)).join(' / ')} at the start, ` +
        `${loadavg()
          .map((l) => l.toFixed(2))
          .join(' / ')} at the end; ${redis.version()}; ${libVersion()}\n`,
    );
  } finally {
    await redis.stop();
  }
}

void main();
