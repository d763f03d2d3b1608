import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { RedisAckQueueService, type RedisAckQueueConnection } from '../../../lib';
import { ConsumerProcesses } from '../../support/consumer-processes';
import { hold, seededRandom, storedIds } from '../../support/fault-ledger';
import { eventually } from '../../support/queue-fixture';
import { ReplyDroppingProxy } from '../../support/reply-dropping-proxy';
import { RedisSentinelSet } from '../../support/redis-sentinel';
import { RedisServer } from '../../../support/redis-processes/redis-server';
import { checkHistory, type HistoryVerdict } from './history-checker';
import type { RunPlan } from './history-plan';
import { HistoryRecorder } from './history-recorder';

export interface RunResult {
  plan: RunPlan;
  verdict: HistoryVerdict;
  files: { jsonl: string; edn: string; verdict: string };
  /** Fault ops of the history, by kind. */
  faults: Record<string, number>;
  durationMs: number;
}

/** Where the run's clients connect, and how the runner reaches the data to damage and read it. */
interface Topology {
  connection: RedisAckQueueConnection;
  consumerEnv: Record<string, string>;
  /** A client of the server that holds the data now (the master after a failover). */
  dataClient(): Promise<Redis>;
  server?: RedisServer;
  proxy?: ReplyDroppingProxy;
  sentinel?: RedisSentinelSet;
  stop(): Promise<void>;
}

/** A push's errors that say it was not applied: Redis refused it before running it. */
const REFUSED = /^(READONLY|OOM|NOPERM|NOAUTH|LOADING|MASTERDOWN|NOSCRIPT)/;

/**
 * One seeded fault run: consumer processes, a producer here pushing `plan.messages` ids (each retried
 * with the same id until confirmed), the plan's faults, then a drain and a final read of what Redis
 * still stores. Writes the history (JSON lines, and set-full EDN) and the verdict into `outDir`.
 */
export async function runHistory(plan: RunPlan, outDir: string): Promise<RunResult> {
  const started = Date.now();
  const name = `${plan.seed}-${plan.kind}`;
  const topic = `history.${plan.seed}`;
  const recorder = new HistoryRecorder();
  const topology = await startTopology(plan);
  const consumers = new ConsumerProcesses({
    ...topology.consumerEnv,
    TOPIC: topic,
    LEASE_MS: String(plan.leaseMs),
    HANDLER_MS: String(plan.handlerMs),
    CONCURRENCY: '4',
    // Many lost leases must not dead-letter a message: the model expects each one acked.
    MAX_ATTEMPTS: '100',
    ...(plan.keepCompleted ? { KEEP_COMPLETED: '1' } : {}),
  });
  const queue = new RedisAckQueueService({ connection: topology.connection, commandTimeoutMs: 2_000 });
  try {
    await recorder.syncClock(await topology.dataClient());
    await queue.connect();
    await Promise.all(Array.from({ length: plan.consumers }, () => consumers.start()));
    const producer = new RecordedProducer(queue, topic, recorder, plan);
    const producing = producer.run();
    await injectFaults(plan, topology, consumers, producer, recorder);
    await producing;
    // Only a net against a hang: after the last fault, every lease runs out within leaseMs.
    await queue.waitUntilIdle(topic, { timeoutMs: 30_000 }).catch(() => undefined);
    const delivered = new Set(consumers.of('start').map((event) => event.id!));
    await consumers.waitForEndReports(delivered, 10_000);
    const stored = await pendingIds(await topology.dataClient(), topic);
    recorder.record({ type: 'ok', f: 'final-read', process: 'nemesis', stored });
  } finally {
    await consumers.stopAll();
    await queue.close(0).catch(() => undefined);
    await topology.stop();
  }
  recorder.fromConsumers(consumers.events);
  const history = recorder.history();
  const verdict = checkHistory(history);
  const files = { ...recorder.write(outDir, name, history), verdict: join(outDir, `${name}.verdict.json`) };
  const faults: Record<string, number> = {};
  for (const op of history) if (op.f === 'fault') faults[op.kind] = (faults[op.kind] ?? 0) + 1;
  const result = { plan, verdict, files, faults, durationMs: Date.now() - started };
  writeFileSync(files.verdict, JSON.stringify(result, null, 2));
  return result;
}

/** Ids Redis still stores as messages to handle: completed records (`keepCompleted`) left out. */
async function pendingIds(redis: Redis, topic: string): Promise<string[]> {
  const [stored, completed] = await Promise.all([
    storedIds(redis, topic),
    redis.zrange(`{ackq:${topic}}:completed`, '0', '-1'),
  ]);
  const done = new Set(completed);
  return stored.filter((id) => !done.has(id));
}

/** The id of message `n` of a run: a fixed width, so that no id is a prefix of another (the proxy matches bytes). */
export function messageId(seed: number, n: number): string {
  return `m${seed}-${String(n).padStart(5, '0')}`;
}

/** Pushes the plan's messages at an even pace, one call at a time, each retried with its id until confirmed. */
class RecordedProducer {
  /** The next message not yet pushed. */
  next = 0;

  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly topic: string,
    private readonly recorder: HistoryRecorder,
    private readonly plan: RunPlan,
  ) {}

  async run(): Promise<void> {
    const start = Date.now();
    const everyMs = this.plan.produceMs / this.plan.messages;
    for (; this.next < this.plan.messages; this.next++) {
      const wait = start + this.next * everyMs - Date.now();
      if (wait > 0) await hold(wait);
      await this.pushUntilConfirmed(this.next);
    }
  }

  private async pushUntilConfirmed(n: number): Promise<void> {
    const id = messageId(this.plan.seed, n);
    // Bounded: a push still unconfirmed this long after its first try is left indeterminate.
    const giveUpAt = Date.now() + 30_000;
    for (let attempt = 1; ; attempt++) {
      this.recorder.record({ type: 'invoke', f: 'push', process: 'producer', id, attempt });
      try {
        const { duplicate } = await this.queue.push(this.topic, { n }, { id });
        this.recorder.record({ type: 'ok', f: 'push', process: 'producer', id, attempt, duplicate });
        return;
      } catch (error) {
        const { code, redisCode } = error as { code?: string; redisCode?: string };
        const refused = code === 'REDIS_COMMAND' && REFUSED.test(redisCode ?? '');
        this.recorder.record({
          type: refused ? 'fail' : 'info',
          f: 'push',
          process: 'producer',
          id,
          attempt,
          error: refused ? redisCode : (code ?? 'unknown'),
        });
        if (Date.now() > giveUpAt) return;
        await hold(100);
      }
    }
  }
}

/**
 * Runs the plan's faults at their moments. A kill, a stop and a failover are recorded once they took
 * effect, so that every op of their victim comes before them in the history.
 */
async function injectFaults(
  plan: RunPlan,
  topology: Topology,
  consumers: ConsumerProcesses,
  producer: RecordedProducer,
  recorder: HistoryRecorder,
): Promise<void> {
  // Its own stream of the seed, so the choice of victims does not shift the plan's timings.
  const random = seededRandom(plan.seed ^ 0x9e3779b9);
  const start = Date.now();
  for (const { atMs, lastsMs } of plan.faults) {
    const wait = start + atMs - Date.now();
    if (wait > 0) await hold(wait);
    const alive = consumers.alive();
    const victim = alive[Math.floor(random() * alive.length)];
    switch (plan.kind) {
      case 'kill-consumer':
        // Recorded once the process is gone: every line it printed comes before.
        await consumers.kill(victim);
        recorder.fault('kill-consumer', { pid: victim.pid });
        await consumers.start();
        break;
      case 'stop-consumer':
        consumers.signal(victim, 'SIGSTOP');
        recorder.fault('stop-consumer', { pid: victim.pid, stoppedMs: lastsMs });
        await hold(lastsMs);
        consumers.signal(victim, 'SIGCONT');
        recorder.fault('cont-consumer', { pid: victim.pid });
        break;
      case 'kill-redis-always':
      case 'kill-redis-everysec': {
        const server = topology.server!;
        const appendfsync = plan.kind === 'kill-redis-always' ? 'always' : 'everysec';
        recorder.fault('kill-redis', { pid: server.pid, appendfsync, downMs: lastsMs });
        await server.restartAfter(lastsMs);
        recorder.fault('restart-redis', { pid: server.pid, appendfsync });
        break;
      }
      case 'sentinel-failover': {
        const sentinel = topology.sentinel!;
        const old = await sentinel.master();
        // Asynchronous replication made certain to lag: the pushes confirmed while the replica is
        // frozen are on the master only, and the failover loses them (lost-to-failover).
        const replica = await sentinel.freezeReplica();
        recorder.fault('freeze-replica', { port: replica.port, frozenMs: lastsMs });
        await hold(lastsMs);
        // Recorded once the master is gone: every reply it gave comes before.
        await sentinel.killMaster();
        recorder.fault('failover', { from: old.port });
        sentinel.thawReplicas();
        const promoted = await sentinel.waitForNewMaster(old);
        recorder.fault('failover-done', { to: promoted.port });
        break;
      }
      case 'cut-connections':
        recorder.fault('cut-connections', { sockets: topology.proxy!.cutConnections() });
        break;
      case 'push-retry': {
        // A message not yet pushed: its push is the first command that carries its id.
        // Its reply is dropped and every connection held for `lastsMs`, past the producer's
        // commandTimeoutMs: the push is indeterminate to its caller, which retries it with the same id.
        const proxy = topology.proxy!;
        const id = messageId(plan.seed, producer.next + 1);
        const dropped = proxy.dropped;
        recorder.fault('drop-push-reply', { id, heldMs: lastsMs });
        proxy.dropReplyTo(id, { thenCutOff: true });
        await eventually(() => proxy.dropped > dropped || producer.next >= plan.messages, 10_000).catch(
          () => undefined,
        );
        await hold(lastsMs);
        proxy.reopen();
        recorder.fault('reopen-connections', { id });
        break;
      }
    }
  }
}

async function startTopology(plan: RunPlan): Promise<Topology> {
  if (plan.kind === 'sentinel-failover') {
    const sentinel = await RedisSentinelSet.start();
    return {
      connection: { sentinels: sentinel.sentinels, name: sentinel.name },
      consumerEnv: {
        REDIS_SENTINELS: sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(','),
        REDIS_SENTINEL_NAME: sentinel.name,
      },
      dataClient: async () => sentinel.client(await sentinel.master()),
      sentinel,
      stop: () => sentinel.stop(),
    };
  }
  const server = await RedisServer.start({
    appendonly: plan.kind === 'kill-redis-always' || plan.kind === 'kill-redis-everysec',
    // The harness writes `appendfsync always`; a later directive wins.
    config: plan.kind === 'kill-redis-everysec' ? ['appendfsync', 'everysec'] : [],
  });
  const inspect = server.client();
  const viaProxy = plan.kind === 'cut-connections' || plan.kind === 'push-retry';
  const proxy = viaProxy ? await ReplyDroppingProxy.start(server.port) : undefined;
  const url = proxy ? proxy.url : server.url;
  return {
    connection: url,
    consumerEnv: { REDIS_URL: url },
    dataClient: () => Promise.resolve(inspect),
    server,
    proxy,
    stop: async () => {
      await proxy?.close();
      await server.stop();
    },
  };
}
