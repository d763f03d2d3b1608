// This project's transport for @nestjs/microservices (RedisAckQueueServer + RedisAckQueueClient)
// against Nest's built-in Redis transport (Transport.REDIS: ServerRedis + ClientRedis, on ioredis),
// on one private redis-server, in one run of interleaved rounds (the first system of each round
// rotates). Our server runs at two handler concurrencies: 50 (the transport's default) and 1.
// Each round starts the server in a child process (bench/transport-server.ts) and a client in this
// one, warms both up, then runs each workload in turn:
// - events: `n` emits, at most `inFlight` in flight, to an @EventPattern handler that counts; from
//   the first emit until the handler has seen them all. Nest's pub/sub may drop events: once every
//   emit has completed, the count is read until it stops rising, and what never came is lost.
// - requests: `inFlight` callers, each awaiting firstValueFrom(client.send('sum', [1, 2])) in turn,
//   `n` in all; p50 and p99 latency of one call.
// Around each workload the Redis server's INFO commandstats (reset before) and CPU time give what
// one message cost Redis: script calls, commands (those run inside scripts included) and CPU.
// Prints the medians and writes bench/results/transport.md.
// Run: npm run bench:transport [-- --events=40000 --requests=10000 --callers=50 --rounds=5]
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ClientRedis } from '@nestjs/microservices';
import type { Redis } from 'ioredis';
import { firstValueFrom, lastValueFrom, type Observable } from 'rxjs';
import { RedisAckQueueClient } from '../lib/microservices';
import { cpuModel, libVersion, loadAverage, spread } from './machine';
import { BenchRedis } from './redis-server';
import {
  EVENT_PATTERN,
  epochNow,
  REQUEST_PATTERN,
  type ServerCommand,
  type ServerReport,
  type TransportSystem,
} from './transport-protocol';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const EVENTS = arg('events', 40_000);
const REQUESTS = arg('requests', 10_000);
const CALLERS = arg('callers', 50);
const ROUNDS = arg('rounds', 5);
/** Emits in flight at once in the main events workload, for every system. */
const IN_FLIGHT = 500;
/** The issue's workload (issue 40): this many sends and this many emits, ISSUE_IN_FLIGHT at once. */
const ISSUE_MESSAGES = 2_000;
const ISSUE_IN_FLIGHT = 50;
const WARMUP_EVENTS = 2_000;
const WARMUP_REQUESTS = 1_000;
/** Once every emit completed, the count has to stay still this long for the rest to count as lost. */
const QUIET_MS = 3_000;
/** How long a server process may take to exit after its app closed. */
const EXIT_MS = 30_000;

/** A system measured: a transport, and (ours) its server's handler concurrency. */
interface System {
  key: string;
  transport: TransportSystem;
  concurrency: number;
  label: string;
}
const SYSTEMS: System[] = [
  {
    key: 'ours',
    transport: 'ours',
    concurrency: 50,
    label: 'this project (RedisAckQueueServer + RedisAckQueueClient)',
  },
  {
    key: 'ours-c1',
    transport: 'ours',
    concurrency: 1,
    label: 'this project, handler concurrency 1',
  },
  // Nest's server has no bound: every message is handled as it arrives.
  { key: 'nest-redis', transport: 'nest-redis', concurrency: 0, label: "Nest's Redis transport (Transport.REDIS)" },
];
const NEST = 'nest-redis';

/** One measured workload of a round. */
interface Workload {
  key: string;
  kind: 'events' | 'requests';
  n: number;
  /** Emits in flight, or callers. */
  inFlight: number;
}
const WORKLOADS: Workload[] = [
  { key: 'events', kind: 'events', n: EVENTS, inFlight: IN_FLIGHT },
  { key: 'requests', kind: 'requests', n: REQUESTS, inFlight: CALLERS },
  { key: 'issue events', kind: 'events', n: ISSUE_MESSAGES, inFlight: ISSUE_IN_FLIGHT },
  { key: 'issue requests', kind: 'requests', n: ISSUE_MESSAGES, inFlight: ISSUE_IN_FLIGHT },
];

/** What one message cost over a workload. */
interface RedisCost {
  /** EVAL / EVALSHA / FCALL calls. */
  scripts: number;
  /** Every command, those run inside scripts included. */
  commands: number;
  /** Redis CPU time, µs. */
  cpuUs: number;
  /** CPU time of the client's process (the driver) and of the server's process, µs. */
  clientUs: number;
  serverUs: number;
}

/** One workload of one round of one system. */
interface Figures {
  /** Events or round trips per second. */
  rate: number;
  /** Events the handler never saw. */
  lost: number;
  /** From the last emit's completion to the handler seeing the last event (ms): how far the server lagged. */
  lagMs: number;
  p50: number;
  p99: number;
  /** Requests that errored or were answered wrong. */
  failed: number;
  cost: RedisCost;
}

type RoundFigures = Map<string, Figures>;

/** The server process of one round, driven over IPC. */
class ServerProcess {
  private readonly waiting = new Map<ServerReport['type'], ((report: ServerReport) => void)[]>();
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (report: ServerReport) => this.waiting.get(report.type)?.shift()?.(report));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Starts the server of `system` and resolves once it listens (rejects if it exits first). */
  static async start(system: System, url: string): Promise<ServerProcess> {
    const child = fork(join(__dirname, 'transport-server.js'), [system.transport, url, String(system.concurrency)], {
      stdio: 'inherit',
    });
    const server = new ServerProcess(child);
    await server.next('ready');
    return server;
  }

  /** The next report of `type`; rejects if the process exits before it comes. */
  next<Type extends ServerReport['type']>(type: Type): Promise<Extract<ServerReport, { type: Type }>> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(type) ?? [];
      queue.push(resolve as (report: ServerReport) => void);
      this.waiting.set(type, queue);
      void this.exited.then((code) => reject(new Error(`the ${type} report never came: server exited (${code})`)));
    });
  }

  ask<Type extends ServerReport['type']>(
    command: ServerCommand,
    type: Type,
  ): Promise<Extract<ServerReport, { type: Type }>> {
    const reply = this.next(type);
    this.child.send(command);
    return reply;
  }

  /** Closes the app and waits for the process to exit on its own; fails if it does not. */
  async close(): Promise<void> {
    // A process that already died has no channel left; its exit code tells.
    if (this.child.connected) this.child.send({ type: 'close' } satisfies ServerCommand);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), EXIT_MS)));
    const code = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (code === 'late') {
      this.child.kill('SIGKILL');
      throw new Error(`server process still running ${EXIT_MS} ms after app.close()`);
    }
    if (code !== 0) throw new Error(`server process exited with code ${code}`);
  }
}

/** What the bench uses of a `ClientProxy` (both clients are one, each with its own status type). */
interface BenchClient {
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  emit(pattern: string, data: unknown): Observable<unknown>;
  send<Result>(pattern: string, data: unknown): Observable<Result>;
}

function openClient(system: System, url: string): BenchClient {
  if (system.transport === 'ours') return new RedisAckQueueClient({ connection: url, timeoutMs: 30_000 });
  const { hostname, port } = new URL(url);
  return new ClientRedis({ host: hostname, port: Number(port) });
}

/** `total` calls of `task`, at most `limit` at once. */
async function inFlight(limit: number, total: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, total) }, worker));
}

/**
 * Events per second from the first emit to the last event seen, how many never came, and how long
 * after the last emit completed the last event was seen.
 */
async function events(server: ServerProcess, client: BenchClient, n: number, limit: number) {
  await server.ask({ type: 'expect', n }, 'expecting');
  const reached = server.next('reached');
  const start = epochNow();
  await inFlight(limit, n, (i) => lastValueFrom(client.emit(EVENT_PATTERN, { i }), { defaultValue: undefined }));
  const emitted = epochNow();
  const seen = await Promise.race([reached.then(({ at }) => ({ count: n, at })), settled(server, reached)]);
  return { rate: seen.count / ((seen.at - start) / 1000), lost: n - seen.count, lagMs: seen.at - emitted };
}

/** The count once it has not risen for QUIET_MS (never, if every event arrives first). */
async function settled(server: ServerProcess, reached: Promise<unknown>): Promise<{ count: number; at: number }> {
  let done = false;
  void reached.then(
    () => (done = true),
    () => (done = true),
  );
  let last = await server.ask({ type: 'count' }, 'count');
  let stillSince = Date.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (done) return new Promise<never>(() => undefined);
    const now = await server.ask({ type: 'count' }, 'count');
    if (now.count !== last.count) [last, stillSince] = [now, Date.now()];
    else if (Date.now() - stillSince >= QUIET_MS) return last;
  }
}

/** Round trips per second of `callers` sequential callers, and their latencies (ms). */
async function requests(client: BenchClient, total: number, callers: number) {
  const latencies: number[] = [];
  let failed = 0;
  const start = performance.now();
  await inFlight(callers, total, async () => {
    const sent = performance.now();
    try {
      const sum = await firstValueFrom(client.send<number>(REQUEST_PATTERN, [1, 2]));
      if (sum === 3) latencies.push(performance.now() - sent);
      else failed++;
    } catch {
      failed++;
    }
  });
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { rate: latencies.length / seconds, p50: at(0.5), p99: at(0.99), failed };
}

/** Until Nest's server has subscribed to both patterns' channels: a publish before that is lost. */
async function subscribed(admin: Redis): Promise<void> {
  for (;;) {
    const reply = (await admin.pubsub('NUMSUB', EVENT_PATTERN, REQUEST_PATTERN)) as (string | number)[];
    if (Number(reply[1]) > 0 && Number(reply[3]) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Commands the benchmark itself sends. */
const OWN_COMMANDS = new Set(['info', 'config|resetstat', 'flushall', 'pubsub|numsub']);
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** Runs `work` and says what each of its `n` messages cost Redis and the two processes. */
async function costOf<R>(
  redis: BenchRedis,
  server: ServerProcess,
  n: number,
  work: () => Promise<R>,
): Promise<R & { cost: RedisCost }> {
  await redis.admin.config('RESETSTAT');
  const cpuBefore = await redis.cpuSeconds();
  const serverBefore = (await server.ask({ type: 'cpu' }, 'cpu')).us;
  const clientBefore = process.cpuUsage();
  const result = await work();
  const client = process.cpuUsage(clientBefore);
  const serverAfter = (await server.ask({ type: 'cpu' }, 'cpu')).us;
  const cpuAfter = await redis.cpuSeconds();
  let scripts = 0;
  let commands = 0;
  for (const [command, calls] of await redis.commandCalls()) {
    if (OWN_COMMANDS.has(command)) continue;
    commands += calls;
    if (SCRIPT_COMMANDS.has(command)) scripts += calls;
  }
  const cost = {
    scripts: scripts / n,
    commands: commands / n,
    cpuUs: ((cpuAfter - cpuBefore) * 1e6) / n,
    clientUs: (client.user + client.system) / n,
    serverUs: (serverAfter - serverBefore) / n,
  };
  return { ...result, cost };
}

async function round(redis: BenchRedis, system: System): Promise<RoundFigures> {
  const server = await ServerProcess.start(system, redis.url);
  const client = openClient(system, redis.url);
  const figures: RoundFigures = new Map();
  try {
    await client.connect();
    if (system.transport === 'nest-redis') await subscribed(redis.admin);
    await events(server, client, WARMUP_EVENTS, IN_FLIGHT);
    await requests(client, WARMUP_REQUESTS, CALLERS);
    for (const workload of WORKLOADS) {
      const { n, inFlight: limit } = workload;
      const measured =
        workload.kind === 'events'
          ? await costOf(redis, server, n, async () => ({
              ...(await events(server, client, n, limit)),
              ...{ p50: NaN, p99: NaN, failed: 0 },
            }))
          : await costOf(redis, server, n, async () => ({
              ...(await requests(client, n, limit)),
              lost: 0,
              lagMs: NaN,
            }));
      figures.set(workload.key, measured);
    }
    return figures;
  } finally {
    await client.close();
    await server.close();
    await redis.admin.flushall();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[Math.floor(middle)];
};
const count = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (Number.isNaN(n) ? '' : n.toFixed(2));
const ratio = (n: number) => `${n.toFixed(2)}x`;

/** The median of one figure of one workload over a system's rounds. */
function medianOf(rounds: RoundFigures[], workload: string, pick: (f: Figures) => number): number {
  return median(rounds.map((r) => pick(r.get(workload)!)));
}

/**
 * Each system's median rate of one workload against Nest's in each round of the run (a round runs
 * every system back to back), then the median of those ratios.
 */
function ratioToNest(figures: Map<string, RoundFigures[]>, system: string, workload: string): number {
  const nest = figures.get(NEST)!;
  return median(figures.get(system)!.map((r, i) => r.get(workload)!.rate / nest[i].get(workload)!.rate));
}

/** One system's lowest and highest figures over its rounds. */
function spreadOf(system: string, rounds: RoundFigures[]): string {
  const rates = (workload: string) =>
    spread(
      rounds.map((r) => r.get(workload)!.rate),
      count,
    );
  return `${system} events/s ${rates('events')}, round trips/s ${rates('requests')}`;
}

function reportText(figures: Map<string, RoundFigures[]>, redisVersion: string, loadBefore: string): string {
  const rowsOf = (events: string, requests: string) =>
    SYSTEMS.map(({ key, label }) => {
      const rounds = figures.get(key)!;
      const lost = rounds.reduce((sum, r) => sum + r.get(events)!.lost, 0);
      const n = WORKLOADS.find((w) => w.key === events)!.n;
      const cells = [
        label,
        count(medianOf(rounds, events, (f) => f.rate)),
        key === NEST ? '1x' : ratio(ratioToNest(figures, key, events)),
        `${count(lost)} of ${count(n * rounds.length)}`,
        count(medianOf(rounds, requests, (f) => f.rate)),
        key === NEST ? '1x' : ratio(ratioToNest(figures, key, requests)),
        ms(medianOf(rounds, requests, (f) => f.p50)),
        ms(medianOf(rounds, requests, (f) => f.p99)),
      ];
      return `| ${cells.join(' | ')} |`;
    });
  const header =
    '| system | events/s | events x Nest | events lost | round trips/s | round trips x Nest | p50 ms | p99 ms |';
  const costRows = WORKLOADS.flatMap((workload) =>
    SYSTEMS.map(({ key }) => {
      const rounds = figures.get(key)!;
      const cost = (pick: (c: RedisCost) => number) => medianOf(rounds, workload.key, (f) => pick(f.cost));
      return (
        `| ${workload.key} | ${key} | ${cost((c) => c.scripts).toFixed(2)} | ${cost((c) => c.commands).toFixed(2)} | ` +
        `${cost((c) => c.cpuUs).toFixed(1)} | ${cost((c) => c.clientUs).toFixed(1)} | ${cost((c) => c.serverUs).toFixed(1)} | ` +
        `${cost((c) => c.cpuUs + c.clientUs + c.serverUs).toFixed(1)} |`
      );
    }),
  );
  const failed = SYSTEMS.map(({ key }) => ({
    key,
    failed: figures.get(key)!.reduce((sum, r) => sum + [...r.values()].reduce((s, f) => s + f.failed, 0), 0),
  }));
  return [
    "# Transport: this project's microservice transport against Nest's Redis transport",
    '',
    `- Date: ${new Date().toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores ` +
      `(load average ${loadBefore} before, ${loadAverage()} at the end); Node ${process.version}; ${redisVersion} ` +
      `(private server, \`--save '' --appendonly no\`)`,
    `- Command: \`npm run bench:transport\`. ${ROUNDS} rounds of each system, interleaved (the first system of a round`,
    '  rotates), on one redis-server; each round starts a fresh server process (a Nest microservice from',
    '  `NestFactory.createMicroservice`, forked) and a fresh client in the driver process, warms them up',
    `  (${count(WARMUP_EVENTS)} events, ${count(WARMUP_REQUESTS)} requests), then measures. Medians over the rounds; every round below.`,
    '  "x Nest": the median over the rounds of the system\'s rate against Nest\'s in the same round.',
    `- events/s: ${count(EVENTS)} \`client.emit('${EVENT_PATTERN}', { i })\` per round, at most ${IN_FLIGHT} in flight, to an`,
    '  `@EventPattern` handler that counts; from the first emit until the handler has seen the last event. Lost: events',
    `  the handler never saw (the count still ${QUIET_MS / 1000} s after every emit completed), over all rounds.`,
    `- round trips/s: ${CALLERS} callers, each awaiting \`firstValueFrom(client.send('${REQUEST_PATTERN}', [1, 2]))\` in turn,`,
    `  ${count(REQUESTS)} per round; p50 and p99: the latency of one call, in ms.`,
    `- Settings: ours \`new RedisAckQueueServer({ connection, concurrency: 50 })\` (at most 50 messages of`,
    '  each pattern in its handler at once, the default), and again with `concurrency: 1`;',
    '  `new RedisAckQueueClient({ connection, timeoutMs: 30000 })`, defaults otherwise; Nest',
    '  `{ transport: Transport.REDIS, options: { host, port } }` and `new ClientRedis({ host, port })`, defaults',
    '  otherwise (its handlers run unbounded: every message is handled as it arrives).',
    '',
    header,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rowsOf('events', 'requests'),
    '',
    `## The issue's workload: ${count(ISSUE_MESSAGES)} emits, then ${count(ISSUE_MESSAGES)} sends, ${ISSUE_IN_FLIGHT} in flight`,
    '',
    header,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rowsOf('issue events', 'issue requests'),
    '',
    '## What one message costs Redis',
    '',
    'Per event or request, medians over the rounds: script calls (EVAL / EVALSHA), every command (those run inside',
    "scripts too, as INFO commandstats counts them), the Redis server's CPU time (used_cpu_user + sys), and the CPU",
    "time of the client's process and of the server's (process.cpuUsage()): on a loaded machine, what a message",
    'costs is steadier than how fast it goes.',
    '',
    '| workload | system | script calls | commands | Redis CPU µs | client CPU µs | server CPU µs | all CPU µs |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...costRows,
    '',
    '## Delivery guarantees',
    '',
    "- **Nest's Redis transport** is Redis pub/sub: an event published while no server subscribes is lost, every",
    '  subscribed instance gets every event, nothing is acked, a handler that throws or a process that dies loses it.',
    '- **This project** stores each message until a handler acks it: a failed or interrupted delivery is retried',
    '  with backoff, then dead-lettered; each message goes to one instance; a reply is kept (with a TTL) until its',
    '  caller takes it.',
    '',
    '## Every round',
    '',
    'Lag: from the last emit completing to the handler seeing the last event. A small lag means the handler kept up',
    'with the emits, and the rate is what the client could emit (0 or less: the last event was handled before its',
    'emit had completed on the client).',
    '',
    '| system | workload | rate /s | lost | lag ms | p50 ms | p99 ms |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...SYSTEMS.flatMap(({ key }) =>
      figures.get(key)!.flatMap((r, i) =>
        WORKLOADS.map(({ key: workload }) => {
          const f = r.get(workload)!;
          const lag = Number.isNaN(f.lagMs) ? '' : f.lagMs.toFixed(1);
          return `| ${key} ${i + 1} | ${workload} | ${count(f.rate)} | ${count(f.lost)} | ${lag} | ${ms(f.p50)} | ${ms(f.p99)} |`;
        }),
      ),
    ),
    '',
    `- Spread over the rounds (lowest to highest): ${SYSTEMS.map(({ key }) => spreadOf(key, figures.get(key)!)).join('; ')}.`,
    failed.some((s) => s.failed > 0)
      ? `- **Failed requests** (errored or wrong answer): ${failed.map((s) => `${s.key} ${s.failed}`).join(', ')}.`
      : '- Every request was answered, correctly.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  // The clients log as the server processes do: warnings and errors.
  Logger.overrideLogger(['error', 'warn']);
  const loadBefore = loadAverage();
  const redis = await BenchRedis.start();
  const figures = new Map<string, RoundFigures[]>(SYSTEMS.map(({ key }) => [key, []]));
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < SYSTEMS.length; k++) {
        const system = SYSTEMS[(i + k) % SYSTEMS.length];
        const round_ = await round(redis, system);
        figures.get(system.key)!.push(round_);
        const line = WORKLOADS.map(({ key }) => {
          const f = round_.get(key)!;
          const extra = Number.isNaN(f.p50)
            ? `${f.lost} lost`
            : `p50 ${ms(f.p50)} ms${f.failed ? `, ${f.failed} failed` : ''}`;
          const cpu = f.cost.cpuUs + f.cost.clientUs + f.cost.serverUs;
          return `${key} ${count(f.rate)}/s (${extra}, ${f.cost.scripts.toFixed(2)} scripts, ${cpu.toFixed(0)} µs CPU)`;
        }).join('; ');
        process.stdout.write(`round ${i + 1} ${system.key.padEnd(10)} ${line}\n`);
      }
    }
  } finally {
    await redis.stop();
  }
  const text = reportText(figures, redis.version(), loadBefore);
  process.stdout.write(`\n${text}`);
  const dir = join(__dirname, '..', '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'transport.md'), text);
}

void main();
