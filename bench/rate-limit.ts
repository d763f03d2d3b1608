// A fleet-wide rate limit across three consumer processes: a deep backlog on a topic limited to
// RATE deliveries per second, consumed for SECONDS; prints the starts in each second (fixed windows
// on the clock Redis and the processes share: one machine) against the limit.
// Run: npm run bench:rate-limit [-- --rate=2000 --seconds=10 --quick]
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { RedisAckQueueService } from '../lib';
import { BenchRedis } from './redis-server';

const quick = process.argv.includes('--quick');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const RATE = arg('rate', quick ? 500 : 2_000);
const SECONDS = arg('seconds', quick ? 3 : 10);
const PROCESSES = 3;

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const children: ChildProcess[] = [];
  try {
    const topic = `bench.rate.${Date.now()}`;
    const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
    const starts: number[] = [];
    for (let p = 0; p < PROCESSES; p++) {
      const child = fork(join(__dirname, 'rate-consumer.js'), {
        env: { ...process.env, REDIS_URL: redis.url, TOPIC: topic, RATE: String(RATE) },
      });
      children.push(child);
      await new Promise<void>((resolve) =>
        child.on('message', (message) => (message === 'ready' ? resolve() : starts.push(...(message as number[])))),
      );
    }
    // The backlog goes in once every consumer is up (they wait idle meanwhile).
    const backlog = RATE * (SECONDS + 3);
    for (let i = 0; i < backlog; i += 1000) {
      await queue.pushMany(
        topic,
        Array.from({ length: Math.min(1000, backlog - i) }, (_, j) => ({ payload: i + j })),
      );
    }
    // Whole seconds only: the first full window after every process consumes, SECONDS of them.
    const from = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    await new Promise((resolve) => setTimeout(resolve, from + SECONDS * 1000 - Date.now() + 300));
    await Promise.all(
      children.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.send('stop')))),
    );
    await queue.close();
    const perSecond = Array.from(
      { length: SECONDS },
      (_, k) => starts.filter((t) => t >= from + k * 1000 && t < from + (k + 1) * 1000).length,
    );
    const total = perSecond.reduce((a, b) => a + b, 0);
    process.stdout.write(
      `fleet-wide rate limit: ${RATE}/s across ${PROCESSES} consumer processes, ${SECONDS} s of a deep backlog\n` +
        `starts per second: ${perSecond.join(', ')}\n` +
        `achieved ${(total / SECONDS).toFixed(0)}/s = ${((total / SECONDS / RATE) * 100).toFixed(1)} % of the limit; ` +
        `busiest second ${Math.max(...perSecond)} (limit ${RATE})\n`,
    );
    if (Math.max(...perSecond) > RATE) process.exitCode = 1;
  } finally {
    for (const child of children) child.kill();
    await redis.stop();
  }
}

void main();
