// What a start-by deadline and tags cost per message: bytes kept in Redis while it waits, Redis
// commands, and Redis CPU (the scripts' time in INFO commandstats, which counts what they run) for
// its push and for its consume (reserve and ack at concurrency 50), against a plain message. Each
// variant pushes COUNT messages in batches of 500 to a fresh topic, then consumes them; variants
// take turns in ROUNDS interleaved rounds and the median of each figure is printed.
// Run: npm run bench:extras [-- --count=50000 --rounds=3]
import { RedisAckQueueService } from '../lib/service/redis-ack-queue.service';
import type { PlainPushManyItem, PlainPushOptions } from '../lib/interfaces';
import { BenchRedis, commandCalls, commandUsec } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const COUNT = arg('count', 50_000);
const ROUNDS = arg('rounds', 3);
const BATCH = 500;

/** The options each variant's messages are pushed with. */
const VARIANTS: Record<string, (n: number) => PlainPushOptions> = {
  plain: () => ({}),
  'deadline (expiresInMs)': () => ({ expiresInMs: 3_600_000 }),
  '1 tag': (n) => ({ tags: [`tenant:${n % 100}`] }),
  '3 tags': (n) => ({ tags: [`tenant:${n % 100}`, `campaign:${n % 7}`, 'spring'] }),
  'deadline + 3 tags': (n) => ({ expiresInMs: 3_600_000, tags: [`tenant:${n % 100}`, `campaign:${n % 7}`, 'spring'] }),
};

interface Figures {
  bytes: number;
  pushCommands: number;
  pushUs: number;
  consumeCommands: number;
  consumeUs: number;
}

const sum = (map: Map<string, number>, filter: (name: string) => boolean) =>
  [...map].filter(([name]) => filter(name)).reduce((total, [, n]) => total + n, 0);
const scripts = (name: string) => name.startsWith('evalsha') || name.startsWith('eval');
const counted = (name: string) => !['info', 'config|resetstat', 'memory|usage', 'flushall'].includes(name);

async function measure(
  redis: BenchRedis,
  queue: RedisAckQueueService,
  variant: string,
  round: number,
): Promise<Figures> {
  const topic = `bench.extras.${round}.${Object.keys(VARIANTS).indexOf(variant)}`;
  const options = VARIANTS[variant];
  await redis.admin.flushall();
  const memoryBefore = await redis.info('memory', 'used_memory');
  await redis.admin.config('RESETSTAT');
  for (let start = 0; start < COUNT; start += BATCH) {
    const items: PlainPushManyItem[] = [];
    for (let n = start; n < Math.min(start + BATCH, COUNT); n++) items.push({ payload: { n }, ...options(n) });
    await queue.pushMany(topic, items);
  }
  const pushCalls = await commandCalls(redis.admin);
  const pushUsec = await commandUsec(redis.admin);
  const bytes = ((await redis.info('memory', 'used_memory')) - memoryBefore) / COUNT;
  await redis.admin.config('RESETSTAT');
  let handled = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const consumer = queue.consume(topic, () => void (++handled === COUNT && finished()), { concurrency: 50 });
  await done;
  await queue.waitUntilIdle(topic);
  await consumer.close();
  const consumeCalls = await commandCalls(redis.admin);
  const consumeUsec = await commandUsec(redis.admin);
  return {
    bytes,
    pushCommands: sum(pushCalls, (name) => counted(name) && !scripts(name)) / COUNT,
    pushUs: sum(pushUsec, scripts) / COUNT,
    consumeCommands: sum(consumeCalls, (name) => counted(name) && !scripts(name)) / COUNT,
    consumeUs: sum(consumeUsec, scripts) / COUNT,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error', history: false });
  await queue.connect();
  const results = new Map<string, Figures[]>(Object.keys(VARIANTS).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of Object.keys(VARIANTS))
      results.get(variant)!.push(await measure(redis, queue, variant, round));
  }
  console.log(`${COUNT} messages per variant, median of ${ROUNDS} interleaved rounds, redis-server ${redis.version()}`);
  console.log(
    '| per message | bytes in Redis | push: commands | push: script CPU (µs) | consume: commands | consume: script CPU (µs) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const [variant, figures] of results) {
    const m = (pick: (f: Figures) => number, digits: number) => median(figures.map(pick)).toFixed(digits);
    console.log(
      `| ${variant} | ${m((f) => f.bytes, 0)} | ${m((f) => f.pushCommands, 2)} | ${m((f) => f.pushUs, 2)} | ` +
        `${m((f) => f.consumeCommands, 2)} | ${m((f) => f.consumeUs, 2)} |`,
    );
  }
  await queue.close();
  await redis.stop();
}

void main();
