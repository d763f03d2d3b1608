import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuModel, libVersion } from './machine';
import { DEFAULT_PREFIX } from '../lib/common/redis-ack-queue.constants';
import { keySlot, partitionTags } from '../lib/engine/keys/partitions';
import { message, now, type QueueSystem, type RunningConsumer } from './adapter';
import { drain, percentile, prefill } from './measure';
import { RedisServer } from '../support/redis-processes/redis-server';
import { BenchCluster } from './redis-cluster';
import { type OursOptions, openOurs } from './systems/ours';

/**
 * `npm run bench:cluster`: push and consume rates of one topic on a private Redis Cluster of
 * 1 and 3 masters, unpartitioned and partitioned, through the Nest module and a @QueueHandler.
 * Flags: --quick (small counts, results to bench/results/quick/), --rounds=N (default 5; quick 1),
 * --out=<name>.md (the report's file name; default cluster.md). With REDIS_SERVER_BIN=valkey-server
 * (Valkey 8.0 or later) the report also splits Redis CPU by slot.
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
  { name: '3 masters, 12 partitions', masters: 3, partitions: 12, apps: 1 },
];

const CONCURRENCY = 50;
const BATCH = 1_000;
/** Single `push` calls after the drain, this many under way at once: what a message costs when each is its own call. */
const SINGLES_IN_FLIGHT = 100;
/** The benchmark's own commands and cluster topology queries: not queue work. */
const NOT_QUEUE_WORK = /^(info|config\|resetstat|flushall|cluster\|.*)$/;
/** Commands a client sends that run others: their commandstats µs include what they ran. */
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** µs by the slot they were spent on (CLUSTER SLOT-STATS cpu-usec): what partitioning divides, and what it does not. */
interface SlotSplit {
  /** The topic's partition slots, summed per master. */
  partitions: number[];
  /** The topic's home slot (its plain tag): partition count, wake list, history. */
  home: number;
  /** Every other slot: the prefix-wide topic registry, id counter and data marker. */
  other: number;
}

/** What one scenario measured in one round. */
interface Sample {
  push: number;
  consume: number;
  consumed: number;
  pushed: number;
  capped: boolean;
  /** Queue commands each master served while pushing / while consuming (inside scripts included). */
  pushCommands: number[];
  consumeCommands: number[];
  /** Script calls (EVALSHA…) each master served while pushing / while consuming. */
  pushScripts: number[];
  consumeScripts: number[];
  /** Redis CPU seconds each master used while pushing / while consuming (INFO cpu, user + sys). */
  pushCpu: number[];
  consumeCpu: number[];
  /** µs each master spent in script calls and blocking pops (INFO commandstats) while pushing / consuming. */
  pushUsec: number[];
  consumeUsec: number[];
  /** Redis CPU µs by slot while pushing / consuming; undefined where the server does not count per slot. */
  pushSlots: SlotSplit | undefined;
  consumeSlots: SlotSplit | undefined;
  /** Single `push` calls after the drain (no consumer running): how many, Redis CPU, script calls and slots. */
  singles: number;
  singleCpu: number[];
  singleScripts: number[];
  singleSlots: SlotSplit | undefined;
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
  const out = value('out') ?? 'cluster.md';
  if (!/^[\w.-]+\.md$/.test(out)) throw new Error('--out must be a file name ending in .md');
  return { quick, rounds, out };
}

async function main(): Promise<number> {
  const { quick, rounds, out } = parseArgs(process.argv.slice(2));
  const total = quick ? 2_000 : 50_000;
  const capMs = quick ? 20_000 : 120_000;
  const outDir = join(__dirname, '..', '..', 'results', ...(quick ? ['quick'] : []));
  const started = new Date();
  const startLoad = loadavg();
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
    join(outDir, out),
    markdown(table, details(samples, total), costs(samples), started, startLoad, redisVersion, quick, rounds, total),
  );
  log(`wrote ${join(outDir, out)}`);
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
  const tags = partitionTags(DEFAULT_PREFIX, topic, scenario.partitions);
  const partitionsPerMaster = cluster.nodes.map(() => 0);
  for (const tag of tags) partitionsPerMaster[owner(keySlot(tag))]++;
  const options: OursOptions = {
    connection: { cluster: cluster.seeds },
    ...(scenario.partitions > 1 ? { topics: { [topic]: { partitions: scenario.partitions } } } : {}),
  };
  const system = await openOurs(options, topic);
  try {
    const split = (before: Map<number, number>, after: Map<number, number>): SlotSplit | undefined =>
      cluster.slotStats ? slotSplit(before, after, tags, topic, owner, cluster.nodes.length) : undefined;
    await cluster.resetStats();
    const pushCpu0 = await cluster.cpuSeconds();
    const pushSlots0 = await cluster.slotCpuUsec();
    const push = await prefill(system, total, BATCH, capMs);
    const pushCpu1 = await cluster.cpuSeconds();
    const pushSlots = split(pushSlots0, await cluster.slotCpuUsec());
    const pushCalls = await cluster.commandCalls();
    const pushUsec = clientUsec(await cluster.commandUsec());

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
    const consumeSlots0 = await cluster.slotCpuUsec();
    const node0 = process.cpuUsage();
    const wall0 = now();
    const consume = await drain(consumers, push.count, CONCURRENCY, capMs);
    const node = process.cpuUsage(node0);
    const drainSeconds = (now() - wall0) / 1000;
    const cpu1 = await cluster.cpuSeconds();
    const consumeSlots = split(consumeSlots0, await cluster.slotCpuUsec());
    const consumeCalls = await cluster.commandCalls();
    const consumeUsec = clientUsec(await cluster.commandUsec());
    const stats = await system.service.stats(topic);
    let missing = 0;
    let redelivered = 0;
    for (let i = 0; i < push.count; i++) {
      if (deliveries[i] === 0) missing++;
      else redelivered += deliveries[i] - 1;
    }

    // Checked empty above; now single pushes, which the next scenario's FLUSHALL clears.
    const singles = singlesOf(total);
    await cluster.resetStats();
    const singleCpu0 = await cluster.cpuSeconds();
    const singleSlots0 = await cluster.slotCpuUsec();
    await pushOneByOne(system, push.count, singles);
    const singleCpu1 = await cluster.cpuSeconds();
    const singleSlots = split(singleSlots0, await cluster.slotCpuUsec());
    const singleCalls = await cluster.commandCalls();
    return {
      push: push.rate,
      consume: consume.rate,
      consumed: consume.count,
      pushed: push.count,
      capped: push.capped || consume.capped,
      pushCommands: queueCommands(pushCalls),
      consumeCommands: queueCommands(consumeCalls),
      pushScripts: scriptCalls(pushCalls),
      consumeScripts: scriptCalls(consumeCalls),
      pushCpu: pushCpu1.map((c, i) => c - pushCpu0[i]),
      consumeCpu: cpu1.map((c, i) => c - cpu0[i]),
      pushUsec,
      consumeUsec,
      pushSlots,
      consumeSlots,
      singles,
      singleCpu: singleCpu1.map((c, i) => c - singleCpu0[i]),
      singleScripts: scriptCalls(singleCalls),
      singleSlots,
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

/** Single pushes per scenario: a tenth of the batch-pushed messages. */
const singlesOf = (total: number) => Math.max(SINGLES_IN_FLIGHT, total / 10);

/** `count` single pushes (seq from `from` on), SINGLES_IN_FLIGHT under way at a time. */
async function pushOneByOne(system: QueueSystem, from: number, count: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await system.push(message(from + next++));
  };
  await Promise.all(Array.from({ length: SINGLES_IN_FLIGHT }, lane));
}

function queueCommands(perNode: Map<string, number>[]): number[] {
  return perNode.map((calls) =>
    [...calls].reduce((sum, [command, n]) => (NOT_QUEUE_WORK.test(command) ? sum : sum + n), 0),
  );
}

function scriptCalls(perNode: Map<string, number>[]): number[] {
  return perNode.map((calls) =>
    [...calls].reduce((sum, [command, n]) => (SCRIPT_COMMANDS.has(command) ? sum + n : sum), 0),
  );
}

/**
 * µs each node spent on what clients sent it: script calls (which include the commands they ran)
 * and the consumers' blocking pop of the wake list. The one-off partition-count check is left out.
 */
function clientUsec(perNode: Map<string, number>[]): number[] {
  return perNode.map((usec) =>
    [...usec].reduce((sum, [command, us]) => (SCRIPT_COMMANDS.has(command) || command === 'blpop' ? sum + us : sum), 0),
  );
}

/** The slots' CPU between two snapshots, as partition slots per master, the home slot and the rest. */
function slotSplit(
  before: Map<number, number>,
  after: Map<number, number>,
  tags: string[],
  topic: string,
  owner: (slot: number) => number,
  masters: number,
): SlotSplit {
  const partitionSlots = new Set(tags.map(keySlot));
  const home = keySlot(`${DEFAULT_PREFIX}:${topic}`);
  const result: SlotSplit = { partitions: Array.from({ length: masters }, () => 0), home: 0, other: 0 };
  for (const [slot, usec] of after) {
    const used = usec - (before.get(slot) ?? 0);
    // An unpartitioned topic's one partition is its home slot: counted as a partition.
    if (partitionSlots.has(slot)) result.partitions[owner(slot)] += used;
    else if (slot === home) result.home += used;
    else result.other += used;
  }
  return result;
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

/** "1.2 / 1.1 / 1.2 (Σ 3.5)": µs per message on each master, and the topic's total. */
function perMaster(usec: number[], messages: number): string {
  const each = usec.map((u) => u / messages);
  return each.length === 1 ? fmt(each[0], 2) : `${each.map((u) => fmt(u, 2)).join(' / ')} (Σ ${fmt(sum(each), 2)})`;
}

/** "1.10 / 1.08 / 1.12, home 0.04, other 0.00": CPU µs per message by slot. */
function bySlot(splits: (SlotSplit | undefined)[], messages: number): string {
  if (splits.some((s) => s === undefined)) return 'n/a';
  const all = splits as SlotSplit[];
  const parts = addUp(all.map((s) => s.partitions)).map((u) => fmt(u / messages, 2));
  const home = sum(all.map((s) => s.home)) / messages;
  const other = sum(all.map((s) => s.other)) / messages;
  return `${parts.join(' / ')}, home ${fmt(home, 3)}, other ${fmt(other, 3)}`;
}

/**
 * Per master, what one message of the topic costs: Redis CPU (INFO cpu), µs in the commands
 * clients sent (commandstats), script calls, and (Valkey) CPU by slot. Totals over every round.
 */
function costs(samples: Map<Scenario, Sample[]>): string {
  const header = [
    'scenario',
    'Redis CPU µs per pushed msg, per master',
    'Redis CPU µs per consumed msg, per master',
    'commandstats µs per pushed msg, per master',
    'commandstats µs per consumed msg, per master',
    'script calls per 1,000 pushed msgs, per master',
    'script calls per 1,000 consumed msgs, per master',
    'CPU µs per pushed msg by slot: partitions per master, home, other',
    'CPU µs per consumed msg by slot: partitions per master, home, other',
    'Redis CPU µs per single push, per master',
    'script calls per 1,000 single pushes, per master',
    'CPU µs per single push by slot: partitions per master, home, other',
  ];
  const rows = SCENARIOS.map((scenario) => {
    const list = samples.get(scenario) ?? [];
    if (list.length === 0) return [scenario.name, ...header.slice(1).map(() => 'n/a')];
    const pushed = sum(list.map((s) => s.pushed));
    const consumed = sum(list.map((s) => s.consumed));
    const singles = sum(list.map((s) => s.singles));
    const usec = (pick: (s: Sample) => number[]) => addUp(list.map(pick));
    const cpu = (pick: (s: Sample) => number[]) => usec(pick).map((seconds) => seconds * 1e6);
    const perThousand = (counts: number[], messages: number) =>
      counts.map((c) => fmt((1000 * c) / messages, 1)).join(' / ');
    return [
      scenario.name,
      perMaster(
        cpu((s) => s.pushCpu),
        pushed,
      ),
      perMaster(
        cpu((s) => s.consumeCpu),
        consumed,
      ),
      perMaster(
        usec((s) => s.pushUsec),
        pushed,
      ),
      perMaster(
        usec((s) => s.consumeUsec),
        consumed,
      ),
      perThousand(
        usec((s) => s.pushScripts),
        pushed,
      ),
      perThousand(
        usec((s) => s.consumeScripts),
        consumed,
      ),
      bySlot(
        list.map((s) => s.pushSlots),
        pushed,
      ),
      bySlot(
        list.map((s) => s.consumeSlots),
        consumed,
      ),
      perMaster(
        cpu((s) => s.singleCpu),
        singles,
      ),
      perThousand(
        usec((s) => s.singleScripts),
        singles,
      ),
      bySlot(
        list.map((s) => s.singleSlots),
        singles,
      ),
    ];
  });
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

function markdown(
  table: string,
  detailTable: string,
  costTable: string,
  date: Date,
  startLoad: number[],
  redisVersion: string,
  quick: boolean,
  rounds: number,
  total: number,
): string {
  const cpu = cpuModel();
  const cores = cpus().length;
  const n = total.toLocaleString('en-US');
  const singles = singlesOf(total);
  return `# Benchmark: one topic on Redis Cluster, unpartitioned and partitioned

${quick ? '**Quick smoke run: small counts, figures are not meaningful.**\n\n' : ''}- Date: ${date.toISOString()}
- Machine: ${cpu}, ${cores} cores (load average ${startLoad.map((l) => l.toFixed(2)).join(' / ')} at the start, ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')} at the end); Node ${process.version}; ${redisVersion}
- Command: \`npm run bench:cluster${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`; ${libVersion()}
- Each odd round starts a private cluster of 1 master (one node, CLUSTER ADDSLOTSRANGE 0 16383), runs scenarios 1-2,
  stops it, then starts one of 3 masters (\`redis-cli --cluster create\`, no replicas: equal slot ranges) and runs
  scenarios 3-6; even rounds do the same in reverse order (6 to 1). Nodes are memory-only (\`--save '' --appendonly no\`); FLUSHALL on every master before each scenario.
  ${rounds} round${rounds === 1 ? '' : 's'}, after one untimed warm-up run of scenario 1; with more than one round, a rate is the median
  (lowest–highest in brackets) and a share is over all rounds. Each scenario keeps its topic name in every round, so
  its slots, and the master serving them, are the same each time.
- As users run it: a producer-only Nest app (\`RedisAckQueueModule.forRoot({ connection: { cluster: [seeds] }, topics, consumers: false })\`)
  pushes through the injected \`RedisAckQueueService\`; each consumer app is a Nest application context with one
  \`@QueueHandler(topic, { concurrency: ${CONCURRENCY} })\`. A partitioned topic has \`topics: { [topic]: { partitions: 6 } }\` (or 12) in
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
(scenario 3's shares), and whether 6 and 12 partitions spread pushes and consumer work over all 3 masters (scenarios 4-6's
shares and per-master CPU). Throughput on a cluster with a core per master and consumers on other machines has to be
measured there.

${table}

## Details

${detailTable}

## Per-master cost of a message

What one message of the topic costs each master, over every round (push phase: per pushed message; drain: per
consumed message, acks included). Redis CPU is INFO cpu (\`used_cpu_user\` + \`used_cpu_sys\`, children included) of
each master over the phase: it holds everything the server did (networking, cron, cluster bus), so it is what a master's
core must supply, and being CPU time rather than a rate it does not shrink or grow with other load on the machine (only
cache and scheduling effects do). commandstats µs: time inside the script calls (EVALSHA, which include the commands
they ran) and the consumers' BLPOP of the wake list, the queue work proper; it is time on the clock while a command
ran, so on a loaded machine a master that is descheduled mid-command counts more than its CPU (read it, and the slot
figures, as shares). Script calls per
1,000 messages show the per-call fixed cost each master pays. By slot (only with Valkey 8.0 or later, whose
\`CLUSTER SLOT-STATS\` with \`cluster-slot-stats-enabled yes\` charges each command, a script with all it runs, to the
slot of its keys; n/a on Redis): the topic's partition slots summed per master, its home slot (the plain tag: partition
count, wake list, history), and every other slot (the prefix-wide topic registry, id counter and data marker). The home
slot and the other slots are what more masters do not divide. Single pushes: after each drain, ${singles.toLocaleString('en-US')}
\`push\` calls of one message each, ${SINGLES_IN_FLIGHT} under way at once, no consumer running (a partitioned topic's push
also wakes its consumers in its home slot: one more script call per call, wherever the message went).

${costTable}

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
