// This project's transport for @nestjs/microservices (RedisAckQueueServer + RedisAckQueueClient)
// against Nest's built-in Redis transport (Transport.REDIS: ServerRedis + ClientRedis, on ioredis),
// on one private redis-server, in one run of interleaved rounds (ours, nest-redis, ours, ...; the
// first system of each round alternates). Each round starts the server in a child process
// (bench/transport-server.ts) and a client in this one, warms both up, then measures:
// - events/s: EVENTS emits, at most IN_FLIGHT in flight, to an @EventPattern handler that counts;
//   from the first emit until the handler has seen them all. Nest's pub/sub may drop events: once
//   every emit has completed, the count is read until it stops rising, and what never came is lost.
// - round trips/s: CALLERS callers, each awaiting firstValueFrom(client.send('sum', [1, 2])) in turn,
//   REQUESTS in all; p50 and p99 latency of one call.
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
/** Emits in flight at once, for both systems. */
const IN_FLIGHT = 500;
/** Our server's handler concurrency (each handler's messages in flight); Nest's Redis server has no bound. */
const CONCURRENCY = 50;
const WARMUP_EVENTS = 2_000;
const WARMUP_REQUESTS = 1_000;
/** Once every emit completed, the count has to stay still this long for the rest to count as lost. */
const QUIET_MS = 3_000;
/** How long a server process may take to exit after its app closed. */
const EXIT_MS = 30_000;
const SYSTEMS: TransportSystem[] = ['ours', 'nest-redis'];
const LABELS: Record<TransportSystem, string> = {
  ours: 'this project (RedisAckQueueServer + RedisAckQueueClient)',
  'nest-redis': "Nest's Redis transport (Transport.REDIS)",
};

/** One round of one system. */
interface RoundFigures {
  eventsPerSecond: number;
  lost: number;
  /** From the last emit's completion to the handler seeing the last event (ms): how far the server lagged. */
  lagMs: number;
  roundTripsPerSecond: number;
  p50: number;
  p99: number;
  /** Requests that errored or were answered wrong. */
  failed: number;
}

/** The server process of one round, driven over IPC. */
class ServerProcess {
  private readonly waiting = new Map<ServerReport['type'], ((report: ServerReport) => void)[]>();
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (report: ServerReport) => this.waiting.get(report.type)?.shift()?.(report));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Starts the server of `system` and resolves once it listens (rejects if it exits first). */
  static async start(system: TransportSystem, url: string): Promise<ServerProcess> {
    const child = fork(join(__dirname, 'transport-server.js'), [system, url, String(CONCURRENCY)], {
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

function openClient(system: TransportSystem, url: string): BenchClient {
  if (system === 'ours') return new RedisAckQueueClient({ connection: url, timeoutMs: 30_000 });
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
async function events(server: ServerProcess, client: BenchClient, n: number) {
  await server.ask({ type: 'expect', n }, 'expecting');
  const reached = server.next('reached');
  const start = epochNow();
  await inFlight(IN_FLIGHT, n, (i) => lastValueFrom(client.emit(EVENT_PATTERN, { i }), { defaultValue: undefined }));
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

/** Round trips per second of CALLERS sequential callers, and their latencies (ms). */
async function requests(client: BenchClient, total: number) {
  const latencies: number[] = [];
  let failed = 0;
  const start = performance.now();
  await inFlight(CALLERS, total, async () => {
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

async function round(redis: BenchRedis, system: TransportSystem): Promise<RoundFigures> {
  const server = await ServerProcess.start(system, redis.url);
  const client = openClient(system, redis.url);
  try {
    await client.connect();
    if (system === 'nest-redis') await subscribed(redis.admin);
    await events(server, client, WARMUP_EVENTS);
    await requests(client, WARMUP_REQUESTS);
    const { rate: eventsPerSecond, lost, lagMs } = await events(server, client, EVENTS);
    const { rate: roundTripsPerSecond, p50, p99, failed } = await requests(client, REQUESTS);
    return { eventsPerSecond, lost, lagMs, roundTripsPerSecond, p50, p99, failed };
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
const ms = (n: number) => n.toFixed(2);

/** One system's lowest and highest figures over its rounds. */
function spreadOf({ system, rounds }: { system: TransportSystem; rounds: RoundFigures[] }): string {
  const events = spread(
    rounds.map((r) => r.eventsPerSecond),
    count,
  );
  const trips = spread(
    rounds.map((r) => r.roundTripsPerSecond),
    count,
  );
  return `${system} events/s ${events}, round trips/s ${trips}`;
}

function reportText(figures: Map<TransportSystem, RoundFigures[]>, redisVersion: string, loadBefore: string): string {
  const summary = SYSTEMS.map((system) => {
    const rounds = figures.get(system)!;
    const lost = rounds.reduce((sum, r) => sum + r.lost, 0);
    const failed = rounds.reduce((sum, r) => sum + r.failed, 0);
    return {
      system,
      rounds,
      row: [
        LABELS[system],
        count(median(rounds.map((r) => r.eventsPerSecond))),
        `${count(lost)} of ${count(EVENTS * rounds.length)}`,
        count(median(rounds.map((r) => r.roundTripsPerSecond))),
        ms(median(rounds.map((r) => r.p50))),
        ms(median(rounds.map((r) => r.p99))),
      ],
      failed,
    };
  });
  const anyFailed = summary.some((s) => s.failed > 0);
  return [
    "# Transport: this project's microservice transport against Nest's Redis transport",
    '',
    `- Date: ${new Date().toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores ` +
      `(load average ${loadBefore} before, ${loadAverage()} at the end); Node ${process.version}; ${redisVersion} ` +
      `(private server, \`--save '' --appendonly no\`)`,
    `- Command: \`npm run bench:transport\`. ${ROUNDS} rounds of each system, interleaved (the first system of a round`,
    '  alternates), on one redis-server; each round starts a fresh server process (a Nest microservice from',
    '  `NestFactory.createMicroservice`, forked) and a fresh client in the driver process, warms them up',
    `  (${count(WARMUP_EVENTS)} events, ${count(WARMUP_REQUESTS)} requests), then measures. Medians over the rounds; every round below.`,
    `- events/s: ${count(EVENTS)} \`client.emit('${EVENT_PATTERN}', { i })\` per round, at most ${IN_FLIGHT} in flight, to an`,
    '  `@EventPattern` handler that counts; from the first emit until the handler has seen the last event. Lost: events',
    `  the handler never saw (the count still ${QUIET_MS / 1000} s after every emit completed), over all rounds.`,
    `- round trips/s: ${CALLERS} callers, each awaiting \`firstValueFrom(client.send('${REQUEST_PATTERN}', [1, 2]))\` in turn,`,
    `  ${count(REQUESTS)} per round; p50 and p99: the latency of one call, in ms.`,
    `- Settings: ours \`new RedisAckQueueServer({ connection, concurrency: ${CONCURRENCY} })\` (at most ${CONCURRENCY} messages of`,
    '  each pattern in its handler at once), `new RedisAckQueueClient({ connection, timeoutMs: 30000 })`, defaults',
    '  otherwise; Nest `{ transport: Transport.REDIS, options: { host, port } }` and `new ClientRedis({ host, port })`,',
    '  defaults otherwise (its handlers run unbounded: every message is handled as it arrives).',
    '',
    '| system | events/s | events lost | round trips/s | p50 ms | p99 ms |',
    '| --- | --- | --- | --- | --- | --- |',
    ...summary.map(({ row }) => `| ${row.join(' | ')} |`),
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
    '| system | events/s | lost | lag ms | round trips/s | p50 ms | p99 ms |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...summary.flatMap(({ system, rounds }) =>
      rounds.map(
        (r, i) =>
          `| ${system} ${i + 1} | ${count(r.eventsPerSecond)} | ${count(r.lost)} | ${r.lagMs.toFixed(1)} | ` +
          `${count(r.roundTripsPerSecond)} | ` +
          `${ms(r.p50)} | ${ms(r.p99)} |`,
      ),
    ),
    '',
    `- Spread over the rounds (lowest to highest): ${summary.map(spreadOf).join('; ')}.`,
    anyFailed
      ? `- **Failed requests** (errored or wrong answer): ${summary.map((s) => `${s.system} ${s.failed}`).join(', ')}.`
      : '- Every request was answered, correctly.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  // The clients log as the server processes do: warnings and errors.
  Logger.overrideLogger(['error', 'warn']);
  const loadBefore = loadAverage();
  const redis = await BenchRedis.start();
  const figures = new Map<TransportSystem, RoundFigures[]>(SYSTEMS.map((system) => [system, []]));
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < SYSTEMS.length; k++) {
        const system = SYSTEMS[(i + k) % SYSTEMS.length];
        const figure = await round(redis, system);
        figures.get(system)!.push(figure);
        process.stdout.write(
          `round ${i + 1} ${system.padEnd(10)} ${count(figure.eventsPerSecond).padStart(7)} events/s ` +
            `(${figure.lost} lost)  ${count(figure.roundTripsPerSecond).padStart(6)} round trips/s ` +
            `p50 ${ms(figure.p50)} ms p99 ${ms(figure.p99)} ms${figure.failed ? ` (${figure.failed} failed)` : ''}\n`,
        );
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
