// Key modes: what a push with debounce, throttle or supersede costs against a plain push, on one
// private redis-server, through the public API, beside BullMQ's `deduplication` where it has the
// equivalent. Every workload pushes the same number of messages to a topic (queue) of its own, with
// no consumer running, in `--in-flight` single push calls at once and in pushMany / addBulk batches
// of `--batch` one after another; one untimed warm-up push first (on a hot key: the key's first, so
// every measured push takes the workload's path). Per run: pushes/s, Redis CPU (INFO cpu) and Redis
// commands (INFO commandstats) per push, this process's CPU per push. Interleaved rounds, each
// workload's figures divided by the plain push's of the same system, call style and round.
// Writes bench/results/key-modes.md (bench/results/partial/ for --quick or changed counts).
// Run: npm run bench:keys [-- --rounds=5 --pushes=20000 --in-flight=100 --batch=100 --quick]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RedisAckQueueService } from '../lib';
import { now } from './adapter';
import {
  type CallStyle,
  bullmqPusher,
  type KeyPusher,
  type KeyWorkload,
  oursPusher,
  WORKLOADS,
} from './key-mode-systems';
import { type Run, type RunKey, reportText, runKey, type System } from './key-mode-report';
import { BenchRedis } from './redis-server';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const arg = (name: string, fallback: number) => Number(value(name) ?? fallback);
const ROUNDS = arg('rounds', quick ? 1 : 5);
const PUSHES = arg('pushes', quick ? 1_000 : 20_000);
const IN_FLIGHT = arg('in-flight', 100);
const BATCH = arg('batch', 100);
const WARM_UP_PUSHES = Math.min(PUSHES, 1_000);
const STYLES: CallStyle[] = ['single', 'batch'];

/** Commands the benchmark itself sends. */
const OWN_COMMANDS = new Set(['info', 'config|resetstat', 'flushall']);
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

let topics = 0;
const log = (text: string) => process.stderr.write(`[keys ${new Date().toISOString().slice(11, 19)}] ${text}\n`);

/** `total` calls of `task`, at most `limit` at once. */
async function inFlight(limit: number, total: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, total) }, worker));
}

/** Pushes 0..total-1 in the call style: single calls `IN_FLIGHT` at once, or batches one after another. */
async function drive(pusher: KeyPusher, style: CallStyle, total: number): Promise<void> {
  if (style === 'single') {
    await inFlight(IN_FLIGHT, total, (seq) => pusher.push([seq], 'single'));
    return;
  }
  for (let from = 0; from < total; from += BATCH) {
    const size = Math.min(BATCH, total - from);
    await pusher.push(
      Array.from({ length: size }, (_, i) => from + i),
      'batch',
    );
  }
}

/**
 * One run: a fresh topic, its backlog, one warm-up push (seq -1: on a hot key its first, which stores), then
 * `total` pushes measured; what is stored afterwards, and everything flushed.
 */
async function measure(
  redis: BenchRedis,
  service: RedisAckQueueService,
  system: System,
  workload: KeyWorkload,
  style: CallStyle,
  total: number,
): Promise<Run> {
  const topic = `bench.keys.${++topics}`;
  const pusher =
    system === 'ours' ? oursPusher(service, topic, workload) : await bullmqPusher(redis.url, topic, workload);
  try {
    await pusher.prefill(workload.backlog ?? 0);
    await pusher.push([-1], style);
    pusher.outcomes.clear();
    await redis.admin.config('RESETSTAT');
    const cpu0 = await redis.cpuSeconds();
    const node0 = process.cpuUsage();
    const start = now();
    await drive(pusher, style, total);
    const seconds = (now() - start) / 1000;
    const node = process.cpuUsage(node0);
    const cpu = (await redis.cpuSeconds()) - cpu0;
    const calls = new Map([...(await redis.commandCalls())].filter(([command]) => !OWN_COMMANDS.has(command)));
    const usec = await redis.commandUsec();
    let commands = 0;
    let scripts = 0;
    for (const [command, n] of calls) {
      commands += n;
      if (SCRIPT_COMMANDS.has(command)) scripts += n;
    }
    return {
      rate: total / seconds,
      redisCpuUs: (cpu * 1e6) / total,
      commands: commands / total,
      scripts: scripts / total,
      nodeCpuUs: (node.user + node.system) / total,
      byCommand: new Map([...calls].map(([command, n]) => [command, n / total])),
      usecByCommand: new Map([...calls.keys()].map((command) => [command, (usec.get(command) ?? 0) / total])),
      // The warm-up push's message is counted: it is the hot key's.
      stored: await pusher.stored(),
      outcomes: new Map(pusher.outcomes),
    };
  } finally {
    await pusher.close();
    await redis.admin.flushall();
  }
}

/** Every run of a round: each workload of each system (BullMQ where it has the equivalent), each call style. */
function runKeys(): RunKey[] {
  const keys: RunKey[] = [];
  for (const style of STYLES) {
    for (const workload of WORKLOADS) {
      keys.push({ system: 'ours', workload: workload.name, style });
      if ('opts' in workload.bullmq) keys.push({ system: 'bullmq', workload: workload.name, style });
    }
  }
  return keys;
}

const workloadNamed = (name: string) => WORKLOADS.find((workload) => workload.name === name)!;

async function main(): Promise<void> {
  const started = new Date();
  const redis = await BenchRedis.start();
  const service = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
  await service.connect();
  const keys = runKeys();
  const runs = new Map<string, Run[]>(keys.map((key) => [runKey(key), []]));
  try {
    // One untimed small run of each first (scripts loaded, code warm).
    for (const key of keys)
      await measure(redis, service, key.system, workloadNamed(key.workload), key.style, WARM_UP_PUSHES);
    log(`warm-up done (${keys.length} runs of ${WARM_UP_PUSHES})`);
    // Round r starts r steps further along, so no run always follows the same one.
    const step = Math.max(1, Math.floor(keys.length / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < keys.length; k++) {
        const key = keys[(round * step + k) % keys.length];
        const run = await measure(redis, service, key.system, workloadNamed(key.workload), key.style, PUSHES);
        runs.get(runKey(key))!.push(run);
      }
      log(`round ${round + 1}/${ROUNDS} done`);
    }
  } finally {
    await service.close();
    await redis.stop();
  }
  const { text, wrong } = reportText({
    started,
    redisVersion: redis.version(),
    settings: { rounds: ROUNDS, pushes: PUSHES, inFlight: IN_FLIGHT, batch: BATCH, quick },
    runs,
  });
  process.stdout.write(text);
  const partial = quick || ['rounds', 'pushes', 'in-flight', 'batch'].some((name) => value(name) !== undefined);
  const dir = join(__dirname, '..', '..', 'results', ...(partial ? ['partial'] : []));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'key-modes.md'), text);
  log(`wrote ${join(dir, 'key-modes.md')}`);
  if (wrong > 0) {
    log(`${wrong} runs answered or stored other than their workload should (see Checks)`);
    process.exitCode = 1;
  }
}

void main();
