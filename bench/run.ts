import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuModel, libVersion } from './machine';
import type { SystemFactory } from './adapter';
import { BenchRedis } from './redis-server';
import { renderChart, renderTable, type Results } from './report';
import { createBeeQueue } from './systems/bee-queue';
import { createBullmq } from './systems/bullmq';
import { createOurs } from './systems/ours';
import { createRawList } from './systems/raw-list';
import type { Figure, Workload, WorkloadContext } from './workloads/context';
import { delayed } from './workloads/delayed';
import { CONCURRENCIES, concurrency } from './workloads/concurrency';
import { depth } from './workloads/depth';
import { idle } from './workloads/idle';
import { latency } from './workloads/latency';
import { memory } from './workloads/memory';
import { priority } from './workloads/priority';
import { throughput } from './workloads/throughput';

const SYSTEMS: Record<string, SystemFactory> = {
  ours: createOurs,
  bullmq: createBullmq,
  bee: createBeeQueue,
  raw: createRawList,
};
/** Workloads a system cannot run (a raw list has no delayed messages); they print n/a. */
const SKIPPED: Record<string, string[]> = { raw: ['delayed'] };
const WORKLOADS: Record<string, Workload> = {
  throughput,
  latency,
  delayed,
  memory,
  idle,
  depth,
  concurrency,
  priority,
};

/** Flags: --quick, --systems=ours,bullmq,bee,raw, --workloads=throughput,latency,delayed,memory,idle,depth,concurrency,priority */
function parseArgs(argv: string[]) {
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const pick = <T>(all: Record<string, T>, list: string | undefined) => {
    const names = list ? list.split(',') : Object.keys(all);
    for (const n of names)
      if (!(n in all)) throw new Error(`unknown name "${n}"; choose from ${Object.keys(all).join(', ')}`);
    return names;
  };
  return {
    quick: argv.includes('--quick'),
    systems: pick(SYSTEMS, value('systems')),
    workloads: pick(WORKLOADS, value('workloads')),
  };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  // Only a full run of everything replaces the committed results.
  const partial =
    args.systems.length < Object.keys(SYSTEMS).length || args.workloads.length < Object.keys(WORKLOADS).length;
  const outDir = join(__dirname, '..', '..', 'results', ...(args.quick ? ['quick'] : partial ? ['partial'] : []));
  const started = new Date();
  const redis = await BenchRedis.start();
  const results: Results = [];
  const details: string[] = [];
  let failures = 0;
  try {
    const redisVersion = redis.version();
    log(`${redisVersion} on port ${redis.port}; ${args.quick ? 'quick' : 'full'} run`);
    const rounded = args.workloads.filter((workload) => workload in ROUNDS);
    const roundedFigures = await interleavedRounds(redis, args.systems, rounded, args.quick);
    for (const key of args.systems) {
      const ctx: WorkloadContext = { redis, factory: SYSTEMS[key], quick: args.quick, details: [] };
      const figures: Figure[] = [...roundedFigures.figures.get(key)!];
      ctx.details.push(...roundedFigures.details.get(key)!);
      const name = systemName(key);
      for (const workload of args.workloads) {
        if (workload in ROUNDS || SKIPPED[key]?.includes(workload)) continue;
        const t0 = Date.now();
        try {
          figures.push(...(await WORKLOADS[workload](ctx)));
          log(`${name}: ${workload} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        } catch (error) {
          failures++;
          log(`${name}: ${workload} FAILED: ${(error as Error).stack ?? String(error)}`);
        }
      }
      await redis.admin.flushall();
      results.push({ system: name, figures });
      if (ctx.details.length > 0) details.push(`### ${name}\n\n${ctx.details.join('\n\n')}`);
    }
    const table = renderTable(results);
    console.log(`\n${table}\n`);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'consume-vs-concurrency.svg'), renderChart(results, CONCURRENCIES));
    writeFileSync(join(outDir, 'latest.md'), markdown(table, details, started, redisVersion, args.quick));
    log(`wrote ${join(outDir, 'latest.md')} and consume-vs-concurrency.svg`);
  } finally {
    await redis.stop();
  }
  return failures === 0 ? 0 : 1;
}

/**
 * The headline workloads run in interleaved rounds, after one untimed warm-up of each system:
 * round r starts with the r-th system, and each figure is the median over the rounds. On a
 * shared 2-core machine single runs of a row differ by 15-40 %; this takes the ratios out of
 * one noisy moment and out of whichever system happened to run first in a cold process.
 */
const ROUNDS: Record<string, number> = { throughput: 5 };

async function interleavedRounds(redis: BenchRedis, systems: string[], workloads: string[], quick: boolean) {
  const figures = new Map(systems.map((key) => [key, [] as Figure[]]));
  const details = new Map(systems.map((key) => [key, [] as string[]]));
  for (const workload of workloads) {
    const rounds = quick ? 1 : ROUNDS[workload];
    const runs = new Map(systems.map((key) => [key, [] as Figure[][]]));
    if (!quick) {
      for (const key of systems) await WORKLOADS[workload]({ redis, factory: SYSTEMS[key], quick: true, details: [] });
      log(`${workload}: warm-up done`);
    }
    for (let round = 0; round < rounds; round++) {
      const order = systems.map((_, i) => systems[(i + round) % systems.length]);
      for (const key of order) {
        const ctx: WorkloadContext = { redis, factory: SYSTEMS[key], quick, details: [] };
        const t0 = Date.now();
        runs.get(key)!.push(await WORKLOADS[workload](ctx));
        // The details (command tables) of the last round stand for all.
        if (round === rounds - 1) details.get(key)!.push(...ctx.details);
        log(
          `${systemName(key)}: ${workload} round ${round + 1}/${rounds} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );
      }
    }
    for (const key of systems) figures.get(key)!.push(...medianFigures(runs.get(key)!));
  }
  return { figures, details };
}

/** Each figure's median over the rounds (rounds list the same figures in the same order). */
function medianFigures(rounds: Figure[][]): Figure[] {
  if (rounds.length === 1) return rounds[0];
  return rounds[0].map((figure, i) => {
    const values = rounds
      .map((round) => round[i].value)
      .filter((v): v is number => v !== undefined)
      .sort((a, b) => a - b);
    const value = values.length === 0 ? undefined : values[Math.floor(values.length / 2)];
    return { ...figure, value, label: `${figure.label}, median of ${rounds.length}` };
  });
}

function systemName(key: string): string {
  const version = (pkg: string) =>
    (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  if (key === 'bullmq') return `BullMQ ${version('bullmq')}`;
  if (key === 'bee') return `bee-queue ${version('bee-queue')}`;
  if (key === 'raw') return 'raw list (floor: no ack)';
  return 'this project';
}

function markdown(table: string, details: string[], date: Date, redisVersion: string, quick: boolean): string {
  const cpu = cpuModel();
  return `# Benchmark: nestjs-redis-ack-queue against BullMQ and bee-queue

${quick ? '**Quick smoke run: small counts, figures are not meaningful.**\n\n' : ''}- Date: ${date.toISOString()}
- Machine: ${cpu}, ${cpus().length} cores (load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')} at the end); Node ${process.version}; ${redisVersion} (private server, \`--save '' --appendonly no\`)
- Command: \`npm run bench${quick ? ' -- --quick' : ''}\`; ${libVersion()}
- Every system runs in this one Node process, against the same redis-server, one after another (FLUSHALL between workloads).
  Throughput runs first: one untimed warm-up of each system, then ${quick ? '1 round' : `${ROUNDS.throughput} rounds`} with the systems
  interleaved (round r starts with the r-th system); its figures are the medians over the rounds.
- This project runs as users run it: a Nest application context from \`RedisAckQueueModule.forRoot({ connection })\` with a
  provider method under \`@QueueHandler(topic, { concurrency })\`; pushes go through the injected \`RedisAckQueueService\`
  (a second, producer-only context with \`consumers: false\`). Library defaults otherwise.
- BullMQ: \`defaultJobOptions: { removeOnComplete: true, removeOnFail: true }\`, a \`Worker\` with \`concurrency\`; defaults otherwise.
- bee-queue: \`removeOnSuccess: true, removeOnFailure: true\`; the worker queue has \`activateDelayedJobs: true\` and runs
  \`checkStalledJobs(5000)\` as its README asks of workers; defaults otherwise.
- raw list (floor: no ack), with \`--systems=raw\`: not a queue but the floor under one. Push is one \`LPUSH\` per body
  (the same JSON bodies), pipelined per batch of 1,000; consume is \`BRPOP\` on \`concurrency\` lanes of one connection.
  No ack, no lease, no retry, no delayed messages: a message a crashed consumer popped is lost.
- Payloads are ~100 bytes of JSON; a handler does nothing but record a time. Ratios are this project ÷ the other:
  above 1 is better where higher is better, below 1 is better where lower is better.
- How each figure is taken:
  - throughput: push N in sequential batch calls of 1,000 (\`pushMany\` / \`addBulk\` / \`saveAll\`), then drain at
    concurrency 50. Consume rates here and below run from the first handler start to the last (startup left out).
    Commands per message: INFO commandstats over the drain, commands run inside Lua scripts included. CPU: Redis
    \`INFO cpu\` and this process's \`process.cpuUsage()\` over the drain, divided by messages.
  - latency: single pushes at 500/s into a consumer (concurrency 10) that has been idle for 1 s; from just before
    the push to handler start (same process, \`performance.now()\`). Producer and consumer share the process, so
    its GC pauses show in the tail.
  - delayed: one batch with absolute due times (\`availableAt\` / BullMQ \`delay\` from the same instant /
    \`delayUntil\`); lateness = handler start − due time, consumer at concurrency 50, idle before the push.
  - memory: \`used_memory\` before and after pushing N messages with no consumer.
  - idle: one consumer (concurrency 10) on an empty queue, after 1 s of settling; \`total_commands_processed\`
    delta (minus the benchmark's own INFO) and this process's CPU.
  - depth: prefill D in batches of 5,000, then the rate over the first min(D, window) messages at concurrency 50.
  - concurrency: prefill N, drain at each concurrency; drawn in the chart below.
- The machine has 2 cores shared by Redis, this process and anything else running (other test suites ran at
  the same time here): repeated runs differed by about ±15 % on most rows and up to ±40 % on single
  low-concurrency rows, so read ratios within 0.85–1.15× as a tie and re-run before trusting one row.

${table}

![consume rate against concurrency](consume-vs-concurrency.svg)

## Details

${details.join('\n\n')}
`;
}

function log(text: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}`);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
