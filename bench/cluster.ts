import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuModel, libVersion } from './machine';
import { DEFAULT_PREFIX } from '../lib/common/redis-ack-queue.constants';
import { keySlot, partitionTags } from '../lib/engine/keys/partitions';
import { now, type QueueSystem, type RunningConsumer } from './adapter';
import { drain, percentile, prefill } from './measure';
import { RedisServer } from '../support/redis-processes/redis-server';
import { BenchCluster } from './redis-cluster';
import { type OursOptions, openOurs } from './systems/ours';

/**
 * `npm run bench:cluster`: push and consume rates of one topic on a private Redis Cluster of
 * 1 and 3 masters, unpartitioned and partitioned, through the Nest module and a @QueueHandler.
 * Flags: --quick (small counts, results to bench/results/quick/), --rounds=N (default 5; quick 1).
 */

interface Scenario {
  name: string;
  masters: number;
  partitions: number;
  /** Consumer apps (Nest application contexts), each with one handler at CONCURRENCY. */
  apps: number;
}

const SCENARIOS: Scenario[] = [
  { name: '1 master, unpartitioned', masters: 1, partitions: 1, apps: 1 },
  { name: '1 master, 6 partitions', masters: 1, partitions: 6, apps: 1 },
  { name: '3 masters, unpartitioned', masters: 3, partitions: 1, apps: 1 },
  { name: '3 masters, 6 partitions', masters: 3, partitions: 6, apps: 1 },
  { name: '3 masters, 6 partitions, 2 consumer apps', masters: 3, partitions: 6, apps: 2 },
];

const CONCURRENCY = 50;
const BATCH = 1_000;
/** The benchmark's own commands and cluster topology queries: not queue work. */
const NOT_QUEUE_WORK = /^(info|config\|resetstat|flushall|cluster\|.*)$/;

/** What one scenario measured in one round. */
interface Sample {
  push: number;
  consume: number;
  consumed: number;
  capped: boolean;
  /** Queue commands each master served while pushing / while consuming (inside scripts included). */
  pushCommands: number[];
  consumeCommands: number[];
  /** Redis CPU seconds each master used while consuming. */
  consumeCpu: number[];
  /** This process's CPU seconds while consuming. */
  nodeCpu: number;
  /** Wall seconds of the whole drain (consumer apps' start and stop included), the window of the CPU figures. */
  drainSeconds: number;
  /** From starting the consumer apps to the first handler start (ms): app startup and the first reserve. */
  firstMs: number;
  /** Deliveries by consumer app. */
  perApp: number[];
  /** Deliveries beyond the first of a message. */
  redelivered: number;
  /** Messages pushed but never delivered within the window. */
  missing: number;
  /** The topic's stats after the consumers stopped: all 0 when every message was acked. */
  leftover: string;
  /** Partitions whose slot each master serves. */
  partitionsPerMaster: number[];
  /** The master of the topic's home slot (its plain tag: partition count, consumers' wake list). */
  homeMaster: number;
}

function parseArgs(argv: string[]) {
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const quick = argv.includes('--quick');
  const rounds = Number(value('rounds') ?? (quick ? 1 : 5));
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
  return { quick, rounds };
}

async function main(): Promise<number> {
  const { quick, rounds } = parseArgs(process.argv.slice(2));
  const total = quick ? 2_000 : 50_000;
  const capMs = quick ? 20_000 : 120_000;
  const outDir = join(__dirname, '..', '..', 'results', ...(quick ? ['quick'] : []));
  const started = new Date();
  const samples = new Map<Scenario, Sample[]>(SCENARIOS.map((s) => [s, []]));
  let failures = 0;
  let redisVersion = 'unknown';
  log(`${quick ? 'quick' : 'full'} run: ${total.toLocaleString('en-US')} messages per scenario, ${rounds} round(s)`);
  await warmUp(total / 5, capMs);
  for (let round = 1; round <= rounds; round++) {
    // Even rounds run everything in reverse order, so a scenario is not always the one that runs
    // first on a fresh cluster or when other work on the machine happens to be busy.
    const order = round % 2 === 1 ? SCENARIOS : [...SCENARIOS].reverse();
    for (const masters of [...new Set(order.map((s) => s.masters))]) {
      const t0 = Date.now();
      const cluster = await BenchCluster.start(masters);
      redisVersion = cluster.version();
      log(
        `round ${round}: ${masters}-master cluster up on ports ${cluster.nodes.map((n) => n.port).join(', ')} in ${Date.now() - t0} ms`,
      );
      try {
        for (const scenario of order.filter((s) => s.masters === masters)) {
          try {
            const sample = await runScenario(cluster, scenario, topicOf(scenario), total, capMs);
            samples.get(scenario)!.push(sample);
            const problems = problemsOf(sample, total);
            if (problems.length > 0) failures++;
            log(
              `round ${round}: ${scenario.name}: push ${fmt(sample.push)}/s, consume ${fmt(sample.consume)}/s, ` +
                `consume commands per master ${shares(sample.consumeCommands)}${problems.length > 0 ? ` PROBLEM: ${problems.join('; ')}` : ''}`,
            );
          } catch (error) {
            failures++;
            log(`round ${round}: ${scenario.name} FAILED: ${(error as Error).stack ?? String(error)}`);
          }
        }
      } finally {
        await cluster.stop();
      }
    }
  }
  const table = renderTable(samples);
  console.log(`\n${table}\n`);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, 'cluster.md'),
    markdown(table, details(samples, total), started, redisVersion, quick, rounds, total),
  );
  log(`wrote ${join(outDir, 'cluster.md')}`);
  return failures === 0 ? 0 : 1;
}

/**
 * One topic name per scenario, the same in every round: its slots, and so which master serves
 * the unpartitioned topic or the home slot, stay the same and shares add up across rounds.
 */
function topicOf(scenario: Scenario): string {
  return `bench-cluster-${SCENARIOS.indexOf(scenario) + 1}`;
}

/** The first scenario once, untimed: the first measured run should not pay for JIT warm-up and first connections. */
async function warmUp(total: number, capMs: number): Promise<void> {
  const t0 = Date.now();
  const cluster = await BenchCluster.start(1);
  try {
    await runScenario(cluster, SCENARIOS[0], 'bench-cluster-warm-up', total, capMs);
  } finally {
    await cluster.stop();
  }
  log(`warm-up (${total.toLocaleString('en-US')} messages on 1 master, not counted) done in ${Date.now() - t0} ms`);
}

/** A fresh topic on an emptied cluster: prefill with batch pushes, then drain with `apps` consumer apps. */
async function runScenario(
  cluster: BenchCluster,
  scenario: Scenario,
  topic: string,
  total: number,
  capMs: number,
): Promise<Sample> {
  await cluster.flushAll();
  const owner = await cluster.slotOwners();
  const partitionsPerMaster = cluster.nodes.map(() => 0);
  for (const tag of partitionTags(DEFAULT_PREFIX, topic, scenario.partitions))
    partitionsPerMaster[owner(keySlot(tag))]++;
  const options: OursOptions = {
    connection: { cluster: cluster.seeds },
    ...(scenario.partitions > 1 ? { topics: { [topic]: { partitions: scenario.partitions } } } : {}),
  };
  const system = await openOurs(options, topic);
  try {
    await cluster.resetStats();
    const push = await prefill(system, total, BATCH, capMs);
    const pushCommands = queueCommands(await cluster.commandCalls());

    const deliveries = new Uint32Array(total);
    const perApp = Array.from({ length: scenario.apps }, () => 0);
    let startedAt = 0;
    let firstAt = 0;
    const consumers: QueueSystem = {
      ...system,
      // Every app starts at once; each counts what it handled, then hands over to drain().
      async startConsumer(concurrency, handler): Promise<RunningConsumer> {
        startedAt = now();
        const apps = await Promise.all(
          perApp.map((_, app) =>
            system.startConsumer(concurrency, (message) => {
              if (firstAt === 0) firstAt = now();
              perApp[app]++;
              deliveries[message.seq]++;
              handler(message);
            }),
          ),
        );
        return { stop: async () => void (await Promise.all(apps.map((a) => a.stop()))) };
      },
    };
    await cluster.resetStats();
    const cpu0 = await cluster.cpuSeconds();
    const node0 = process.cpuUsage();
    const wall0 = now();
    const consume = await drain(consumers, push.count, CONCURRENCY, capMs);
    const node = process.cpuUsage(node0);
    const drainSeconds = (now() - wall0) / 1000;
    const cpu1 = await cluster.cpuSeconds();
    const consumeCommands = queueCommands(await cluster.commandCalls());
    const stats = await system.service.stats(topic);
    let missing = 0;
    let redelivered = 0;
    for (let i = 0; i < push.count; i++) {
      if (deliveries[i] === 0) missing++;
      else redelivered += deliveries[i] - 1;
    }
    return {
      push: push.rate,
      consume: consume.rate,
      consumed: consume.count,
      capped: push.capped || consume.capped,
      pushCommands,
      consumeCommands,
      consumeCpu: cpu1.map((c, i) => c - cpu0[i]),
      nodeCpu: (node.user + node.system) / 1e6,
      drainSeconds,
      firstMs: firstAt - startedAt,
      perApp,
      redelivered,
      missing,
      leftover: [stats.ready, stats.delayed, stats.leased, stats.dead].every((n) => n === 0)
        ? ''
        : JSON.stringify(stats),
      partitionsPerMaster,
      homeMaster: owner(keySlot(`${DEFAULT_PREFIX}:${topic}`)),
    };
  } finally {
    await system.close();
  }
}

function queueCommands(perNode: Map<string, number>[]): number[] {
  return perNode.map((calls) =>
    [...calls].reduce((sum, [command, n]) => (NOT_QUEUE_WORK.test(command) ? sum : sum + n), 0),
  );
}

function problemsOf(sample: Sample, total: number): string[] {
  const problems: string[] = [];
  if (sample.capped) problems.push(`time cap reached (${sample.consumed} of ${total} consumed)`);
  if (sample.missing > 0) problems.push(`${sample.missing} messages never delivered`);
  if (sample.leftover) problems.push(`topic not empty after the drain: ${sample.leftover}`);
  return problems;
}

const median = (values: number[]) => percentile(values, 50);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const addUp = (lists: number[][]) => lists[0].map((_, i) => sum(lists.map((l) => l[i])));
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** "33 / 34 / 33 %": each master's share of the commands, in node order. */
function shares(counts: number[]): string {
  const all = sum(counts);
  if (all === 0) return 'n/a';
  return `${counts.map((c) => Math.round((100 * c) / all)).join(' / ')} %`;
}

/** "22,400 (21,000–23,100)" over rounds, or just the number for one round. */
function spread(values: number[]): string {
  if (values.length === 0) return 'n/a';
  if (values.length === 1) return fmt(values[0]);
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
}

function renderTable(samples: Map<Scenario, Sample[]>): string {
  const header = [
    'scenario',
    'masters',
    'partitions',
    'push/s',
    'consume+ack/s',
    'commands per master: push',
    'commands per master: consume+ack',
  ];
  const rows = SCENARIOS.map((scenario) => {
    const list = samples.get(scenario) ?? [];
    const got = list.length > 0;
    return [
      scenario.name,
      String(scenario.masters),
      String(scenario.partitions),
      spread(list.map((s) => s.push)),
      spread(list.map((s) => s.consume)),
      got ? shares(addUp(list.map((s) => s.pushCommands))) : 'n/a',
      got ? shares(addUp(list.map((s) => s.consumeCommands))) : 'n/a',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const left = (i: number) => i === 0 || i >= 5;
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (left(i) ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function details(samples: Map<Scenario, Sample[]>, total: number): string {
  const rows = SCENARIOS.map((scenario) => {
    const list = samples.get(scenario) ?? [];
    if (list.length === 0) return `| ${scenario.name} | n/a | | | | | | | | | |`;
    const consumed = sum(list.map((s) => s.consumed));
    const perMsg = (seconds: number) => fmt((seconds * 1e6) / consumed, 1);
    const cpu = addUp(list.map((s) => s.consumeCpu));
    const commands = addUp(list.map((s) => s.consumeCommands));
    const apps = addUp(list.map((s) => s.perApp));
    const problems = list.flatMap((s) => problemsOf(s, total));
    const wall = sum(list.map((s) => s.drainSeconds));
    const cores = `${fmt(sum(list.map((s) => s.nodeCpu)) / wall, 2)} / ${fmt(sum(cpu) / wall, 2)}`;
    return (
      `| ${scenario.name} | ${list[0].partitionsPerMaster.join(' / ')} | ${list[0].homeMaster + 1} | ${fmt(sum(commands) / consumed, 2)} | ` +
      `${cpu.map(perMsg).join(' / ')} | ${perMsg(sum(list.map((s) => s.nodeCpu)))} | ${cores} | ${spread(list.map((s) => s.firstMs))} | ${shares(apps)} | ` +
      `${fmt(sum(list.map((s) => s.redelivered)))} | ${problems.length > 0 ? problems.join('; ') : 'none'} |`
    );
  });
  return [
    '| scenario | partitions per master | home slot on master | queue commands per consumed msg | Redis CPU µs per consumed msg, per master | consumer process CPU µs per consumed msg | cores busy while draining: this process / all masters | ms from consumer start to first message | deliveries per consumer app | redeliveries | problems |',
    '|---|---|---:|---:|---|---:|---:|---:|---|---:|---|',
    ...rows,
  ].join('\n');
}

function markdown(
  table: string,
  detailTable: string,
  date: Date,
  redisVersion: string,
  quick: boolean,
  rounds: number,
  total: number,
): string {
  const cpu = cpuModel();
  const cores = cpus().length;
  const n = total.toLocaleString('en-US');
  return `# Benchmark: one topic on Redis Cluster, unpartitioned and partitioned

${quick ? '**Quick smoke run: small counts, figures are not meaningful.**\n\n' : ''}- Date: ${date.toISOString()}
- Machine: ${cpu}, ${cores} cores (load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')} at the end); Node ${process.version}; ${redisVersion}
- Command: \`npm run bench:cluster${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`; ${libVersion()}
- Each odd round starts a private cluster of 1 master (one node, CLUSTER ADDSLOTSRANGE 0 16383), runs scenarios 1-2,
  stops it, then starts one of 3 masters (\`redis-cli --cluster create\`, no replicas: equal slot ranges) and runs
  scenarios 3-5; even rounds do the same in reverse order (5 to 1). Nodes are memory-only (\`--save '' --appendonly no\`); FLUSHALL on every master before each scenario.
  ${rounds} round${rounds === 1 ? '' : 's'}, after one untimed warm-up run of scenario 1; with more than one round, a rate is the median
  (lowest–highest in brackets) and a share is over all rounds. Each scenario keeps its topic name in every round, so
  its slots, and the master serving them, are the same each time.
- As users run it: a producer-only Nest app (\`RedisAckQueueModule.forRoot({ connection: { cluster: [seeds] }, topics, consumers: false })\`)
  pushes through the injected \`RedisAckQueueService\`; each consumer app is a Nest application context with one
  \`@QueueHandler(topic, { concurrency: ${CONCURRENCY} })\`. A partitioned topic has \`topics: { [topic]: { partitions: 6 } }\` in
  every app. Library defaults otherwise. Everything runs in this one Node process.
- push/s: ${n} messages of ~100 B JSON in sequential \`pushMany\` calls of ${BATCH.toLocaleString('en-US')} (a partitioned topic splits each call
  by partition, one script per partition, sent at once). consume+ack/s: drain all ${n} at concurrency ${CONCURRENCY} per app,
  from the first handler start to the last (startup left out), as in the main benchmark. Scenario 5 runs two consumer
  apps (concurrency ${CONCURRENCY} each, so ${2 * CONCURRENCY} in all) against the same partitioned topic.
- Commands per master: each master's INFO commandstats over the push phase and over the drain, commands run inside Lua
  scripts included, the benchmark's own INFO / CONFIG / FLUSHALL and CLUSTER topology queries left out; shown as each
  master's share in node order (master 1 serves the lowest slot range). A partitioned topic also uses its home slot
  (the plain \`{ackq:<topic>}\` tag: partition count, and the wake list its consumers block on; a consumer whose
  reserve comes back full wakes the next one there), so the home slot's master serves a little more.
- Every scenario also checks that each pushed message was delivered and that the topic is empty (stats all 0) after
  the consumers stop; a failure shows under problems below.

**What these figures can and cannot show.** The machine has ${cores} cores. The masters, the producer and the consumer
apps (one Node process: one JavaScript thread for all of them) share those cores with each other and with whatever
else runs (the load average above includes it). With 3 masters there are
more processes than cores, so the consume rate cannot grow with the master count here: a master that gets work
takes CPU that the consumer could use, and each extra runnable process adds scheduling delay to every round trip.
That delay matters because a consumer keeps at most two reserves under way (each from one partition, each for up to
half its concurrency), so its rate is bound by round trips as much as by CPU; "cores busy while draining" below
shows how much of the machine this process and the masters actually used. Two consumer apps in one process share
one thread, so scenario 5 shows that consumers share the partitions (deliveries per app), not that a second machine
would add throughput. Run-to-run spread on this shared machine is wide (see the brackets): read differences
smaller than the spread as a tie. What the figures do show: the cost of partitioning on one master (scenario 2
against 1, also in commands per message), that an unpartitioned topic lives on one master whatever the cluster size
(scenario 3's shares), and whether 6 partitions spread pushes and consumer work over all 3 masters (scenarios 4-5's
shares and per-master CPU). Throughput on a cluster with a core per master and consumers on other machines has to be
measured there.

${table}

## Details

${detailTable}

Redeliveries count deliveries beyond the first of a message (at-least-once; none are expected on a healthy run).
`;
}

function log(text: string): void {
  console.log(`[bench:cluster ${new Date().toISOString().slice(11, 19)}] ${text}`);
}

// Ctrl-C or a kill must not leave redis-servers behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    RedisServer.killAll();
    process.exit(130);
  });
}
process.once('exit', () => RedisServer.killAll());

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
