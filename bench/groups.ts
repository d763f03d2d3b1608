// Ordered groups against groupmq (a queue built for per-group FIFO) and against this project's own
// plain topic: GROUPS groups x PER_GROUP messages pushed first, then consumed at concurrency 50 by one
// consumer of each system on the same redis-server, interleaved rounds. Both group handlers check
// order: per group, each message's sequence number must follow the previous one's. Prints consume
// rates (median), violations, ratios and Redis bytes per queued message (grouped and plain), and
// writes them to bench/results/groups.md. With --quota, one more row: ordered groups each under a
// quota that never binds ({ max: 1,000,000, perMs: 60,000, handlerMs }: its bookkeeping only).
// Run: npm run bench:groups [-- --groups=1000 --per-group=50 --rounds=3 --quick --quota]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { Queue, Worker } from 'groupmq';
import Redis from 'ioredis';
import { RedisAckQueueService } from '../lib';
import { cpuModel, libVersion } from './machine';
import { BenchRedis } from './redis-server';

const quick = process.argv.includes('--quick');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const GROUPS = arg('groups', quick ? 100 : 1_000);
const PER_GROUP = arg('per-group', quick ? 10 : 50);
const ROUNDS = arg('rounds', quick ? 1 : 3);
const CONCURRENCY = 50;
const MEMORY_PER_GROUP = 20;
const TOTAL = GROUPS * PER_GROUP;
const QUOTA = process.argv.includes('--quota');

type Item = { group: number; seq: number };

/** Per group, the last sequence number handled; a message that does not follow it is a violation. */
class OrderCheck {
  private readonly last = new Map<number, number>();
  violations = 0;
  handled = 0;
  private finished!: () => void;
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(private readonly ordered = true) {}

  see({ group, seq }: Item): void {
    if (this.ordered && (this.last.get(group) ?? -1) !== seq - 1) this.violations++;
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

/** A payload of 103 bytes of JSON (the size the memory target names), for the memory figures. */
function padded(item: Item): Item & { pad: string } {
  const bare = JSON.stringify({ ...item, pad: '' }).length;
  return { ...item, pad: 'x'.repeat(103 - bare) };
}

/**
 * Pushes the messages in batches of 1,000, each in its group (or with none: `grouped` false);
 * `perGroup` of each group, their payloads 103 bytes when `pad`.
 */
async function pushItems(
  queue: RedisAckQueueService,
  topic: string,
  grouped: boolean,
  perGroup = PER_GROUP,
  pad = false,
) {
  let batch: { payload: Item; group?: string }[] = [];
  for (const item of items()) {
    if (item.seq >= perGroup) break;
    const payload = pad ? padded(item) : item;
    batch.push(grouped ? { payload, group: `g${item.group}` } : { payload });
    if (batch.length === 1000) {
      await queue.pushMany(topic, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await queue.pushMany(topic, batch);
}

/** This queue, the messages in their groups (`grouped`), or the same messages on a plain topic. */
async function ours(url: string, round: number, grouped = true, quota = false): Promise<Figure> {
  const queue = new RedisAckQueueService({ connection: url, logLevel: 'error' });
  await queue.connect();
  const topic = `bench.groups.${round}.${grouped ? 'grouped' : 'plain'}.${Date.now()}`;
  if (quota) {
    await queue.setGroupQuotas(topic, { default: { max: 1_000_000, perMs: 60_000, handlerMs: 86_400_000_000 } });
  }
  await pushItems(queue, topic, grouped);
  // A plain topic promises no order: its handler counts without checking it.
  const check = grouped ? new OrderCheck() : new OrderCheck(false);
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

type System = 'ours' | 'plain' | 'groupmq' | 'quota';
const RUN: Record<System, (url: string, round: number) => Promise<Figure>> = {
  ours: (url, round) => ours(url, round, true),
  plain: (url, round) => ours(url, round, false),
  groupmq,
  quota: (url, round) => ours(url, round, true, true),
};

/**
 * Redis bytes per queued message (used_memory before and after, no consumer): MEMORY_GROUPS groups x
 * 20 in their groups, and the same messages on a plain topic.
 */
async function memoryPerMessage(redis: BenchRedis, grouped: boolean): Promise<number> {
  const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
  await queue.connect();
  const topic = `bench.groups.memory.${grouped ? 'grouped' : 'plain'}`;
  await queue.push(topic, { group: 0, seq: -1 }, grouped ? { group: 'warm-up' } : {});
  const before = await redis.info('memory', 'used_memory');
  await pushItems(queue, topic, grouped, MEMORY_PER_GROUP, true);
  const after = await redis.info('memory', 'used_memory');
  await queue.close();
  await redis.admin.flushall();
  return (after - before) / (GROUPS * MEMORY_PER_GROUP);
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const figures: Record<System, Figure[]> = { ours: [], plain: [], groupmq: [], quota: [] };
  const systems = (Object.keys(figures) as System[]).filter((system) => QUOTA || system !== 'quota');
  let bytes: { grouped: number; plain: number };
  try {
    bytes = { grouped: await memoryPerMessage(redis, true), plain: await memoryPerMessage(redis, false) };
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, each round starting with the next system, so drift hits all alike.
      for (const system of systems.map((_, i) => systems[(i + round) % systems.length])) {
        figures[system].push(await RUN[system](redis.url, round));
        await redis.admin.flushall();
        process.stderr.write(`[groups] round ${round + 1}/${ROUNDS} ${system} done\n`);
      }
    }
  } finally {
    await redis.stop();
  }
  const rate = (system: System) => median(figures[system].map((f) => f.rate));
  const violations = (system: System) => figures[system].reduce((sum, f) => sum + f.violations, 0);
  const count = (n: number) => Math.round(n).toLocaleString('en-US');
  const report =
    `# Ordered groups: this project against groupmq ${groupmqVersion()}\n\n` +
    `- Date: ${new Date().toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores; Node ${process.version}; ${redis.version()}\n` +
    `- Command: \`npm run bench:groups\`. ${GROUPS} groups x ${PER_GROUP} messages pushed first (round robin over the groups),\n` +
    `  then consumed at concurrency ${CONCURRENCY}; both handlers check each group's order. The plain row: the same\n` +
    `  messages on a topic without groups (no order promised or checked). Medians of ${ROUNDS} interleaved rounds.\n` +
    `- Memory: Redis used_memory growth per queued message of 103 bytes, ${GROUPS} groups x ${MEMORY_PER_GROUP}, no consumer.\n\n` +
    `| system | consume msg/s | order violations |\n| --- | ---: | ---: |\n` +
    `| this project, ordered groups | ${count(rate('ours'))} | ${violations('ours')} |\n` +
    `| this project, plain topic | ${count(rate('plain'))} | – |\n` +
    `| groupmq ${groupmqVersion()} | ${count(rate('groupmq'))} | ${violations('groupmq')} |\n` +
    (QUOTA
      ? `| this project, ordered groups with a quota each (never binding) | ${count(rate('quota'))} | ${violations('quota')} |\n`
      : '') +
    `\n` +
    `- ordered groups ÷ groupmq: ${(rate('ours') / rate('groupmq')).toFixed(2)}×; ÷ this project's plain topic: ` +
    `${(rate('ours') / rate('plain')).toFixed(2)}×\n` +
    `- Redis bytes per queued message: ${count(bytes.grouped)} grouped, ${count(bytes.plain)} plain\n`;
  process.stdout.write(report);
  const quickRun =
    quick || QUOTA || process.argv.some((a) => a.startsWith('--groups=') || a.startsWith('--per-group='));
  const outDir = join(__dirname, '..', '..', 'results', ...(quickRun ? ['partial'] : []));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'groups.md'), report);
  if (violations('ours') + violations('quota') > 0) process.exitCode = 1;
}

function groupmqVersion(): string {
  const manifest = readFileSync(join(dirname(require.resolve('groupmq')), '..', 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

void main();
