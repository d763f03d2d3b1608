// Ordered groups against groupmq (a queue built for per-group FIFO): GROUPS groups x PER_GROUP
// messages pushed first, then consumed at concurrency 50 by one consumer of each system on the same
// redis-server, interleaved rounds. Both handlers check order: per group, each message's sequence
// number must follow the previous one's. Prints consume rates (median), violations and the ratio.
// Run: npm run bench:groups [-- --groups=1000 --per-group=50 --rounds=3 --quick]
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Queue, Worker } from 'groupmq';
import Redis from 'ioredis';
import { RedisAckQueueService } from '../lib';
import { BenchRedis } from './redis-server';

const quick = process.argv.includes('--quick');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const GROUPS = arg('groups', quick ? 100 : 1_000);
const PER_GROUP = arg('per-group', quick ? 10 : 50);
const ROUNDS = arg('rounds', quick ? 1 : 3);
const CONCURRENCY = 50;
const TOTAL = GROUPS * PER_GROUP;

type Item = { group: number; seq: number };

/** Per group, the last sequence number handled; a message that does not follow it is a violation. */
class OrderCheck {
  private readonly last = new Map<number, number>();
  violations = 0;
  handled = 0;
  private finished!: () => void;
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  see({ group, seq }: Item): void {
    if ((this.last.get(group) ?? -1) !== seq - 1) this.violations++;
    this.last.set(group, seq);
    if (++this.handled === TOTAL) this.finished();
  }
}

/** Messages in push order: round-robin over the groups, so every group's sequence rises. */
function* items(): Generator<Item> {
  for (let seq = 0; seq < PER_GROUP; seq++) for (let group = 0; group < GROUPS; group++) yield { group, seq };
}

interface Figure {
  rate: number;
  violations: number;
}

async function ours(url: string, round: number): Promise<Figure> {
  const queue = new RedisAckQueueService({ connection: url, logLevel: 'error' });
  await queue.connect();
  const topic = `bench.groups.${round}.${Date.now()}`;
  let batch: { payload: Item; group: string }[] = [];
  for (const item of items()) {
    batch.push({ payload: item, group: `g${item.group}` });
    if (batch.length === 1000) {
      await queue.pushMany(topic, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await queue.pushMany(topic, batch);
  const check = new OrderCheck();
  const started = performance.now();
  const consumer = queue.consume<Item>(topic, (item) => check.see(item), { concurrency: CONCURRENCY });
  await check.done;
  await queue.waitUntilIdle(topic);
  const seconds = (performance.now() - started) / 1000;
  await consumer.close();
  await queue.close();
  return { rate: TOTAL / seconds, violations: check.violations };
}

async function groupmq(url: string, round: number): Promise<Figure> {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue<Item>({ redis, namespace: `bench-${round}-${Date.now()}`, jobTimeoutMs: 30_000 });
  let adds: Promise<unknown>[] = [];
  for (const item of items()) {
    adds.push(queue.add({ groupId: `g${item.group}`, data: item }));
    if (adds.length === 1000) {
      await Promise.all(adds);
      adds = [];
    }
  }
  await Promise.all(adds);
  const check = new OrderCheck();
  const worker = new Worker<Item>({
    queue,
    concurrency: CONCURRENCY,
    handler: (job) => Promise.resolve(check.see(job.data)),
  });
  const started = performance.now();
  void worker.run();
  await check.done;
  await queue.waitForEmpty(60_000);
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await queue.close();
  redis.disconnect();
  return { rate: TOTAL / seconds, violations: check.violations };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const figures = { ours: [] as Figure[], groupmq: [] as Figure[] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, each round in the other order, so drift hits both alike.
      const order = round % 2 === 0 ? (['ours', 'groupmq'] as const) : (['groupmq', 'ours'] as const);
      for (const system of order) {
        figures[system].push(await (system === 'ours' ? ours : groupmq)(redis.url, round));
        process.stderr.write(`[groups] round ${round + 1}/${ROUNDS} ${system} done\n`);
      }
    }
  } finally {
    await redis.stop();
  }
  const rate = (system: keyof typeof figures) => median(figures[system].map((f) => f.rate));
  const violations = (system: keyof typeof figures) => figures[system].reduce((sum, f) => sum + f.violations, 0);
  process.stdout.write(
    `ordered groups: ${GROUPS} groups x ${PER_GROUP} messages, concurrency ${CONCURRENCY}, median of ${ROUNDS}\n` +
      `| system | consume msg/s | order violations |\n| --- | ---: | ---: |\n` +
      `| this project | ${Math.round(rate('ours')).toLocaleString('en-US')} | ${violations('ours')} |\n` +
      `| groupmq ${groupmqVersion()} | ${Math.round(rate('groupmq')).toLocaleString('en-US')} | ${violations('groupmq')} |\n` +
      `ratio: ${(rate('ours') / rate('groupmq')).toFixed(2)}x\n`,
  );
  if (violations('ours') > 0) process.exitCode = 1;
}

function groupmqVersion(): string {
  const manifest = readFileSync(join(dirname(require.resolve('groupmq')), '..', 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

void main();
