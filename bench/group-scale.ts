// The cost of ordered groups as their number grows: the same number of grouped messages spread over
// 10, 1,000 and 100,000 live groups, consumed at concurrency 50; consume rate and Redis server CPU per
// message, median of interleaved rounds, on one private redis-server. A plain topic runs alongside
// as the reference.
// Run: npm run bench:group-scale [-- --messages=100000 --rounds=3]
import { RedisAckQueueService } from '../lib';
import { BenchRedis } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const MESSAGES = arg('messages', 100_000);
const ROUNDS = arg('rounds', 3);
const CONCURRENCY = 50;
/** Group counts measured; 0 is the plain topic (no group). */
const GROUP_COUNTS = [0, 10, 1_000, 100_000].filter((count) => count <= MESSAGES);

interface Figure {
  rate: number;
  redisCpuUs: number;
}

async function round(redis: BenchRedis, groups: number, n: number): Promise<Figure> {
  const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
  await queue.connect();
  const topic = `scale.${groups}.${n}.${Date.now()}`;
  for (let i = 0; i < MESSAGES; i += 1000) {
    const items = Array.from({ length: Math.min(1000, MESSAGES - i) }, (_, j) => {
      const k = i + j;
      return groups === 0 ? { payload: k } : { payload: k, group: `g${k % groups}` };
    });
    await queue.pushMany(topic, items);
  }
  let handled = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const cpuBefore = await redis.cpuSeconds();
  const started = performance.now();
  const consumer = queue.consume(topic, () => void (++handled === MESSAGES && finished()), {
    concurrency: CONCURRENCY,
  });
  await all;
  await queue.waitUntilIdle(topic);
  const seconds = (performance.now() - started) / 1000;
  const redisCpuUs = ((await redis.cpuSeconds()) - cpuBefore) * 1e6;
  await consumer.close();
  await queue.close();
  return { rate: MESSAGES / seconds, redisCpuUs: redisCpuUs / MESSAGES };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const figures = new Map<number, Figure[]>(GROUP_COUNTS.map((count) => [count, []]));
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < GROUP_COUNTS.length; k++) {
        const count = GROUP_COUNTS[(i + k) % GROUP_COUNTS.length];
        figures.get(count)!.push(await round(redis, count, i));
      }
    }
  } finally {
    await redis.stop();
  }
  let out = `${MESSAGES} messages x ${ROUNDS} rounds, concurrency ${CONCURRENCY}; medians\n`;
  for (const [count, values] of figures) {
    const label = count === 0 ? 'no group' : `${count.toLocaleString('en-US')} groups`;
    const rate = median(values.map((f) => f.rate));
    const cpu = median(values.map((f) => f.redisCpuUs));
    out += `${label.padEnd(16)} ${String(Math.round(rate)).padStart(7)} msg/s   ${cpu.toFixed(1).padStart(5)} µs Redis CPU/msg\n`;
  }
  process.stdout.write(out);
}

void main();
