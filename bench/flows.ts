// Flows: this project's pushFlow against BullMQ's FlowProducer, and both against the same messages
// pushed plain, on one private redis-server, through the public API. Three parts:
// - costs: FLOWS_STORED trees stored with no consumer (used_memory and INFO commandstats over the
//   pushes), then consumed (commandstats over the drain): Redis bytes per waiting child and per
//   waiting parent (trees of 10 children against trees of 1), Redis commands per child.
// - end to end: consumers at concurrency 50 on every level's topic, then `--flows` trees pushed
//   (`--in-flight` calls at once), from the first push until the last message (a root) was handled;
//   a fan-in tree (1 parent + 10 children) and a 3-level one (1 + 3 + 9), interleaved rounds.
// - plain topics: the main benchmark's throughput workload (push/s in batches of 1,000, then
//   consume+ack/s at concurrency 50) on this build, on BullMQ, and with `--before=<checkout>` on a
//   second build (its bench compiled: `npx tsc -p bench/tsconfig.json` and the Lua copied, as
//   `npm run bench` does), interleaved rounds: what plain messages pay for flows.
// Writes bench/results/flows.md (bench/results/partial/ for --quick or changed counts).
// Run: npm run bench:flows [-- --before=../wt-before --rounds=5 --flows=2000 --stored=10000 --quick]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { now, sleep, type SystemFactory } from './adapter';
import {
  bullmqFlows,
  bullmqPlain,
  type FlowShape,
  type FlowSystemFactory,
  nodesOf,
  oursFlows,
  oursPlain,
} from './flow-systems';
import { type CommandCounts, type CostFigures, type EndToEnd, type PlainRound, reportText } from './flow-report';
import { BenchRedis } from './redis-server';
import { createBullmq } from './systems/bullmq';
import { createOurs } from './systems/ours';
import type { Figure } from './workloads/context';
import { throughput } from './workloads/throughput';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const arg = (name: string, fallback: number) => Number(value(name) ?? fallback);
const ROUNDS = arg('rounds', quick ? 1 : 5);
const FLOWS = arg('flows', quick ? 200 : 2_000);
const STORED = arg('stored', quick ? 1_000 : 10_000);
const IN_FLIGHT = arg('in-flight', 20);
const BEFORE = value('before');
/** Which parts run: costs, ends (end to end), plain (plain topics); all by default. */
const PARTS = new Set((value('parts') ?? 'costs,ends,plain').split(','));
const CONCURRENCY = 50;
/** A round that has not ended after this long is cut and marked. */
const CAP_MS = 180_000;

export const SHAPES: { key: string; label: string; shape: FlowShape }[] = [
  { key: 'fan-in', label: 'fan-in, 1 parent + 10 children', shape: [10] },
  { key: '3-level', label: '3 levels, 1 + 3 + 9', shape: [3, 3] },
];
export const SYSTEMS: { key: string; factory: FlowSystemFactory }[] = [
  { key: 'ours flows', factory: oursFlows },
  { key: 'BullMQ flows', factory: bullmqFlows },
  { key: 'ours plain', factory: oursPlain },
  { key: 'BullMQ plain', factory: bullmqPlain },
];
/** Commands the benchmark itself sends. */
const OWN_COMMANDS = new Set(['info', 'config|resetstat', 'flushall']);
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

let runs = 0;
const log = (text: string) => process.stderr.write(`[flows ${new Date().toISOString().slice(11, 19)}] ${text}\n`);

/** Resolves when `promise` does or after `ms`, whichever comes first; leaves no timer behind. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** `total` calls of `task`, at most `limit` at once. */
async function inFlight(limit: number, total: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, total) }, worker));
}

/** Handled messages until `total`, with the time of the last one; `wrong` parents missed a child's result. */
function counter(total: number) {
  const state = { seen: 0, wrong: 0, last: 0 };
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const seen = (ok: boolean) => {
    if (!ok) state.wrong++;
    state.last = now();
    if (++state.seen === total) finish();
  };
  return { state, seen, done };
}

async function commandCounts(redis: BenchRedis): Promise<CommandCounts> {
  const byCommand = new Map([...(await redis.commandCalls())].filter(([command]) => !OWN_COMMANDS.has(command)));
  let all = 0;
  let scripts = 0;
  for (const [command, calls] of byCommand) {
    all += calls;
    if (SCRIPT_COMMANDS.has(command)) scripts += calls;
  }
  const usecByCommand = new Map([...(await redis.commandUsec())].filter(([command]) => !OWN_COMMANDS.has(command)));
  return { all, scripts, byCommand, usecByCommand };
}

/**
 * `trees` trees of `shape` pushed with no consumer (one tree first, unmeasured, so scripts and
 * topics exist): used_memory growth and commands; then, if `consume`, drained at concurrency 50.
 */
async function costs(
  redis: BenchRedis,
  factory: FlowSystemFactory,
  shape: FlowShape,
  trees: number,
  consume: boolean,
): Promise<CostFigures> {
  await redis.admin.flushall();
  const system = await factory(redis.url, `bench.flows.${++runs}`, shape);
  try {
    await system.push(-1);
    await sleep(200);
    const before = await redis.info('memory', 'used_memory');
    await redis.admin.config('RESETSTAT');
    const pushCpu0 = await redis.cpuSeconds();
    await inFlight(IN_FLIGHT, trees, (i) => system.push(i));
    const pushCpu = (await redis.cpuSeconds()) - pushCpu0;
    const push = await commandCounts(redis);
    await sleep(200);
    const bytes = (await redis.info('memory', 'used_memory')) - before;
    if (!consume) return { trees, bytes, push, pushCpu };
    await redis.admin.config('RESETSTAT');
    const count = counter((trees + 1) * nodesOf(shape));
    const started = now();
    const consumeCpu0 = await redis.cpuSeconds();
    const nodeCpu0 = process.cpuUsage();
    const consumers = await system.startConsumers(CONCURRENCY, count.seen);
    await within(count.done, CAP_MS);
    const nodeCpu = process.cpuUsage(nodeCpu0);
    const consumeCpu = (await redis.cpuSeconds()) - consumeCpu0;
    const consumed = await commandCounts(redis);
    await consumers.stop();
    const seconds = (count.state.last - started) / 1000;
    return {
      trees,
      bytes,
      push,
      pushCpu,
      consume: consumed,
      consumeCpu,
      nodeCpu: (nodeCpu.user + nodeCpu.system) / 1e6,
      drainRate: count.state.seen / nodesOf(shape) / seconds,
      wrong: count.state.wrong,
      capped: count.state.seen < (trees + 1) * nodesOf(shape),
    };
  } finally {
    await system.close();
    await redis.admin.flushall();
  }
}

/** Consumers first, then `trees` pushes; from the first push until the last message was handled. */
async function endToEnd(
  redis: BenchRedis,
  factory: FlowSystemFactory,
  shape: FlowShape,
  trees: number,
): Promise<EndToEnd> {
  await redis.admin.flushall();
  const system = await factory(redis.url, `bench.flows.${++runs}`, shape);
  const count = counter(trees * nodesOf(shape));
  const consumers = await system.startConsumers(CONCURRENCY, count.seen);
  try {
    const start = now();
    await inFlight(IN_FLIGHT, trees, (i) => system.push(i));
    const pushed = now();
    await within(count.done, CAP_MS);
    const seconds = (count.state.last - start) / 1000;
    return {
      rate: count.state.seen / nodesOf(shape) / seconds,
      pushSeconds: (pushed - start) / 1000,
      seconds,
      wrong: count.state.wrong,
      capped: count.state.seen < trees * nodesOf(shape),
    };
  } finally {
    await consumers.stop();
    await system.close();
    await redis.admin.flushall();
  }
}

/** The throughput workload of `npm run bench` on one plain-topic system, as figures by id. */
async function plainRound(redis: BenchRedis, factory: SystemFactory, small: boolean): Promise<Map<string, number>> {
  const figures: Figure[] = await throughput({ redis, factory, quick: small, details: [] });
  return new Map(figures.map((figure) => [figure.id, figure.value ?? NaN]));
}

function beforeBuild(dir: string): { factory: SystemFactory; commit: string } {
  const root = resolve(dir);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a second build, found at run time
  const { createOurs: factory } = require(join(root, 'bench', 'dist', 'bench', 'systems', 'ours.js')) as {
    createOurs: SystemFactory;
  };
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
  return { factory, commit };
}

async function main(): Promise<void> {
  const started = new Date();
  const redis = await BenchRedis.start();
  const before = BEFORE ? beforeBuild(BEFORE) : undefined;
  const plainSystems: { key: string; factory: SystemFactory }[] = [
    ...(before ? [{ key: `before (${before.commit})`, factory: before.factory }] : []),
    { key: 'this build', factory: createOurs },
    { key: 'BullMQ', factory: createBullmq },
  ];
  const cost = new Map<string, CostFigures>();
  const ends = new Map<string, EndToEnd[]>();
  const plain = new Map<string, PlainRound[]>(plainSystems.map(({ key }) => [key, []]));
  try {
    // Costs: flows of 10 and of 1 child (the difference is a child's), the plain messages of 10.
    // Redis 7 keeps a latency histogram per command called, and CONFIG RESETSTAT frees them all:
    // a RESETSTAT between the two used_memory reads took 0.5 MB off a run's growth. Off while the
    // costs are measured, on again for the rest (as in `npm run bench`).
    const tracking = (on: boolean) =>
      redis.admin.config('SET', 'latency-tracking', on ? 'yes' : 'no').catch(() => undefined);
    await tracking(false);
    for (const { key, factory } of PARTS.has('costs') ? SYSTEMS : []) {
      cost.set(`${key} [10]`, await costs(redis, factory, [10], STORED, true));
      log(`costs: ${key}, ${STORED} trees of 1 + 10 done`);
      if (key.endsWith('flows')) {
        cost.set(`${key} [1]`, await costs(redis, factory, [1], STORED, false));
        log(`costs: ${key}, ${STORED} trees of 1 + 1 done`);
      }
    }
    await tracking(true);
    // End to end: one small untimed run of each, then interleaved rounds.
    const endsToo = PARTS.has('ends');
    for (const { shape } of endsToo ? SHAPES : []) {
      for (const { factory } of SYSTEMS) await endToEnd(redis, factory, shape, Math.min(FLOWS, 200));
    }
    for (let round = 0; round < (endsToo ? ROUNDS : 0); round++) {
      for (const { key: shapeKey, shape } of SHAPES) {
        for (let k = 0; k < SYSTEMS.length; k++) {
          const { key, factory } = SYSTEMS[(round + k) % SYSTEMS.length];
          const figure = await endToEnd(redis, factory, shape, FLOWS);
          const name = `${key} ${shapeKey}`;
          ends.set(name, [...(ends.get(name) ?? []), figure]);
          log(
            `round ${round + 1}/${ROUNDS} ${name}: ${figure.rate.toFixed(0)} trees/s` +
              `${figure.wrong ? ` (${figure.wrong} wrong)` : ''}${figure.capped ? ' (capped)' : ''}`,
          );
        }
      }
    }
    // Plain topics: the main benchmark's throughput workload, a small warm-up of each first.
    const plainToo = PARTS.has('plain');
    for (const { factory } of plainToo ? plainSystems : []) await plainRound(redis, factory, true);
    for (let round = 0; round < (plainToo ? ROUNDS : 0); round++) {
      for (let k = 0; k < plainSystems.length; k++) {
        const { key, factory } = plainSystems[(round + k) % plainSystems.length];
        const figures = await plainRound(redis, factory, quick);
        plain.get(key)!.push(figures);
        log(
          `plain round ${round + 1}/${ROUNDS} ${key}: push ${figures.get('push')!.toFixed(0)}/s, ` +
            `consume ${figures.get('consume')!.toFixed(0)}/s`,
        );
      }
    }
  } finally {
    await redis.stop();
  }
  const text = reportText({
    started,
    redisVersion: redis.version(),
    settings: { rounds: ROUNDS, flows: FLOWS, stored: STORED, inFlight: IN_FLIGHT, concurrency: CONCURRENCY, quick },
    cost,
    ends,
    plain,
    plainKeys: plainSystems.map(({ key }) => key),
  });
  process.stdout.write(text);
  const partial =
    quick || ['rounds', 'flows', 'stored', 'in-flight', 'parts'].some((name) => value(name) !== undefined);
  const dir = join(__dirname, '..', '..', 'results', ...(partial ? ['partial'] : []));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'flows.md'), text);
  log(`wrote ${join(dir, 'flows.md')}`);
  const wrong = [...ends.values()].flat().some((figure) => figure.wrong > 0 || figure.capped);
  if (wrong) process.exitCode = 1;
}

void main();
