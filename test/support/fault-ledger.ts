import type { KeyedPushResult, PlainPushManyItem, RedisAckQueueEvent, RedisAckQueueService } from '../../lib';
import type { ConsumerEvent } from './consumer-processes';
import { ENCODING_ANCHOR, type TestClient } from './queue-fixture';

/** Who ran a handler: `pid:<n>` for a consumer process, any label for an in-process consumer. */
export type Owner = string;

interface Delivery {
  owner: Owner;
  attempt: number;
  at: number;
}

export interface LedgerTally {
  pushed: number;
  /** Distinct pushed ids whose handler started at least once. */
  handled: number;
  /** Handler starts beyond the first per id, retries after a handler failure excluded. */
  duplicates: number;
  /** Pushed ids neither acked nor (when expected) dead. */
  lost: number;
  /** Acks that happened in Redis but were never reported (the reply was lost to a fault). */
  ackedUnreported: number;
  /** Everything that breaks the contract, one line each; empty when all is well. */
  violations: string[];
  /** What a failover lost (resolved before it, never replicated): reported, not violations. */
  lostToFailover: { pushes: number; acks: number };
}

/**
 * Counts every resolved push, every handler start and every ack of a fault scenario, and
 * checks them against the contract: each pushed message handled and acked once; every
 * extra handling explained by a fault (a killed owner, a lease reported lost, an ack that
 * failed, a release at shutdown); no handling after an ack; no unknown message.
 */
export class FaultLedger {
  readonly pushed = new Set<string>();
  /** Pushes answered `duplicate: true` on their first try although the id was new. */
  firstTryDuplicates = 0;
  /** Push calls that rejected (and were retried by the producer). */
  rejectedPushes = 0;
  private readonly deliveries = new Map<string, Delivery[]>();
  private readonly acks = new Map<string, { owner: Owner; attempt: number; at: number }[]>();
  private readonly pushedAt = new Map<string, number>();
  private failoverAt: number | undefined;
  private readonly leaseLost = new Map<string, number>();
  private readonly settleErrors = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly released = new Map<string, number>();
  private readonly killed = new Set<Owner>();

  pushedIds(ids: Iterable<string>): void {
    for (const id of ids) {
      this.pushed.add(id);
      if (!this.pushedAt.has(id)) this.pushedAt.set(id, Date.now());
    }
  }

  start(owner: Owner, id: string, attempt: number): void {
    push(this.deliveries, id, { owner, attempt, at: Date.now() });
  }

  acked(owner: Owner, id: string, attempt: number): void {
    push(this.acks, id, { owner, attempt, at: Date.now() });
  }

  lostLease(id: string): void {
    this.leaseLost.set(id, (this.leaseLost.get(id) ?? 0) + 1);
  }

  /** An ack or nack that failed (Redis down, connection cut): the lease runs out. */
  settleFailed(id: string): void {
    this.settleErrors.set(id, (this.settleErrors.get(id) ?? 0) + 1);
  }

  /** The handler failed (threw): the next delivery is a retry, not a duplicate. */
  failed(id: string): void {
    this.failures.set(id, (this.failures.get(id) ?? 0) + 1);
  }

  /** A shutdown handed the lease back before the handler finished. */
  releasedAtShutdown(id: string): void {
    this.released.set(id, (this.released.get(id) ?? 0) + 1);
  }

  /**
   * The master died at `at` and a replica took over. Replication is asynchronous: a push or
   * an ack that resolved before then may be gone (never handled; handled again). After it,
   * nothing may be lost.
   */
  failedOver(at: number): void {
    this.failoverAt = at;
  }

  /** The owner died (SIGKILL): its unacked deliveries explain redeliveries. */
  kill(owner: Owner): void {
    this.killed.add(owner);
  }

  /** Fault counters for the details line. */
  counters(): Record<string, number> {
    const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
    return {
      rejectedPushes: this.rejectedPushes,
      firstTryDuplicates: this.firstTryDuplicates,
      leaseLost: sum(this.leaseLost),
      settleErrors: sum(this.settleErrors),
      failures: sum(this.failures),
      released: sum(this.released),
      killedOwners: this.killed.size,
    };
  }

  starts(id: string): Delivery[] {
    return this.deliveries.get(id) ?? [];
  }

  ackCount(id: string): number {
    return this.acks.get(id)?.length ?? 0;
  }

  /** Takes the event lines of consumer processes (start, acked, lease-lost, queue-error, retried). */
  fromProcesses(events: ConsumerEvent[]): void {
    for (const event of events) {
      const owner = `pid:${event.pid}`;
      if (!event.id) continue;
      if (event.type === 'start') this.start(owner, event.id, event.attempt ?? 0);
      else if (event.type === 'acked') this.acked(owner, event.id, event.attempt ?? 0);
      else if (event.type === 'lease-lost') this.lostLease(event.id);
      else if (event.type === 'queue-error') this.settleFailed(event.id);
      else if (event.type === 'retried' || event.type === 'dead') this.failed(event.id);
    }
  }

  /** Follows a service's events$ (acked, lease-lost, error with an id, retried, dead). */
  follow(service: RedisAckQueueService, owner: Owner, topic: string): { unsubscribe(): void } {
    return service.events$.subscribe((event: RedisAckQueueEvent) => {
      if (event.topic !== topic || !event.id) return;
      if (event.type === 'acked') this.acked(owner, event.id, event.attempt ?? 0);
      else if (event.type === 'lease-lost') this.lostLease(event.id);
      else if (event.type === 'error') this.settleFailed(event.id);
      else if (event.type === 'retried' || event.type === 'dead') this.failed(event.id);
    });
  }

  /**
   * The verdict. `leftInRedis`: ids still stored at the end (should be none);
   * `expectedDead`: ids that must not be acked (poison), only handled and dead-lettered.
   */
  tally(options: { leftInRedis?: Iterable<string>; expectedDead?: Iterable<string> } = {}): LedgerTally {
    const left = new Set(options.leftInRedis ?? []);
    const dead = new Set(options.expectedDead ?? []);
    const violations: string[] = [];
    let handled = 0;
    let duplicates = 0;
    let lost = 0;
    let ackedUnreported = 0;
    const lostToFailover = { pushes: 0, acks: 0 };
    const failoverAt = this.failoverAt ?? -Infinity;
    for (const id of this.deliveries.keys()) {
      if (!this.pushed.has(id)) violations.push(`${id}: handled but never pushed by this test`);
    }
    for (const id of this.pushed) {
      const starts = this.starts(id);
      const acks = this.acks.get(id) ?? [];
      if (starts.length > 0) handled++;
      if (dead.has(id)) {
        if (acks.length > 0) violations.push(`${id}: poison message was acked`);
        continue;
      }
      const failures = this.failures.get(id) ?? 0;
      const extra = Math.max(0, starts.length - 1 - failures);
      duplicates += extra;
      const ack = acks[0];
      // Delivered again after the failover although acked before it: the ack was not replicated.
      const ackLost = ack !== undefined && ack.at < failoverAt && starts.some((s) => s.at > failoverAt);
      if (ackLost) lostToFailover.acks++;
      if (acks.length > (ackLost ? 2 : 1)) violations.push(`${id}: acked ${acks.length} times`);
      if (ack && !ackLost && starts.some((s) => s.attempt > ack.attempt)) {
        violations.push(
          `${id}: handled again after its ack (attempts ${starts.map((s) => `${s.owner}#${s.attempt}`).join(', ')}; acked #${ack.attempt})`,
        );
      }
      // Each extra start needs a fault behind an earlier delivery.
      const killedUnacked = starts.filter(
        (s) => this.killed.has(s.owner) && !acks.some((a) => a.owner === s.owner),
      ).length;
      const explanations =
        killedUnacked +
        (this.leaseLost.get(id) ?? 0) +
        (this.settleErrors.get(id) ?? 0) +
        (this.released.get(id) ?? 0) +
        (ackLost ? 1 : 0);
      if (extra > explanations) {
        violations.push(
          `${id}: ${extra} unexplained duplicate handling(s): ${starts.map((s) => `${s.owner}#${s.attempt}`).join(', ')}`,
        );
      }
      if (left.has(id)) {
        lost++;
        violations.push(`${id}: still stored in Redis at the end`);
      } else if (starts.length === 0) {
        lost++;
        if (this.pushedAt.get(id)! < failoverAt) lostToFailover.pushes++;
        else violations.push(`${id}: pushed (resolved) but never handled`);
      } else if (!ack) {
        // Gone from Redis without a reported ack: only a fault between the ack and its report explains it.
        ackedUnreported++;
        if (killedUnacked + (this.leaseLost.get(id) ?? 0) + (this.settleErrors.get(id) ?? 0) === 0) {
          lost++;
          violations.push(`${id}: handled, gone from Redis, but no ack was reported and no fault explains it`);
        }
      }
    }
    return { pushed: this.pushed.size, handled, duplicates, lost, ackedUnreported, violations, lostToFailover };
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The one summary line of a scenario, for the README; FAULT_VERBOSE=1 adds a line of details. */
export function printSummary(name: string, tally: LedgerTally, details: Record<string, unknown> = {}): void {
  process.stdout.write(
    `fault ${name}: pushed=${tally.pushed} handled=${tally.handled} duplicates=${tally.duplicates} lost=${tally.lost}\n`,
  );
  if (process.env.FAULT_VERBOSE) {
    process.stdout.write(
      `  details ${name}: ${JSON.stringify({ ackedUnreported: tally.ackedUnreported, ...details })}\n`,
    );
  }
}

/** A small seeded PRNG (mulberry32): random fault moments that a seed reproduces. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of a run: FAULT_SEED when set (to replay a failure), else a fresh one. */
export function faultSeed(): number {
  return process.env.FAULT_SEED ? Number(process.env.FAULT_SEED) : (Date.now() ^ (process.pid << 8)) >>> 0;
}

/** A fault's own duration (an outage, an idle period): not a wait for an event. */
export function hold(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface ProducerOptions {
  total: number;
  batch: number;
  /** Pace: one batch every this many ms (0: as fast as Redis answers). */
  everyMs: number;
  idPrefix: string;
  payload?: (index: number) => unknown;
  item?: (index: number) => Omit<PlainPushManyItem, 'payload' | 'id'>;
  /** Bound on the retries of one rejected batch. */
  maxRetries?: number;
  retryMs?: number;
  /** Told of every batch that resolved, with when: for scenarios that time a fault. */
  onResolved?: (ids: string[], at: number) => void;
}

/**
 * Pushes `total` messages in paced batches with explicit ids, so a batch that rejected
 * (Redis down, connection cut) can be pushed again without making new messages. Only
 * resolved pushes go into the ledger.
 */
export async function produce(
  queue: RedisAckQueueService,
  topic: string,
  ledger: FaultLedger,
  options: ProducerOptions,
): Promise<void> {
  const { total, batch, everyMs, idPrefix, maxRetries = 400, retryMs = 50 } = options;
  const payload = options.payload ?? ((i: number) => ({ n: i }));
  const started = Date.now();
  for (let first = 0, round = 0; first < total; first += batch, round++) {
    const wait = started + round * everyMs - Date.now();
    if (wait > 0) await hold(wait);
    const items: PlainPushManyItem[] = [];
    for (let i = first; i < Math.min(first + batch, total); i++) {
      items.push({ ...(options.item?.(i) ?? {}), id: `${idPrefix}-${i}`, payload: payload(i) });
    }
    for (let attempt = 0; ; attempt++) {
      let results: KeyedPushResult[];
      try {
        results = await queue.pushMany(topic, items);
      } catch (error) {
        ledger.rejectedPushes++;
        if (attempt >= maxRetries)
          throw new Error(`push of ${idPrefix}-${first}.. kept failing: ${String(error)}`, { cause: error });
        await hold(retryMs);
        continue;
      }
      if (attempt === 0) ledger.firstTryDuplicates += results.filter((r) => r.duplicate).length;
      ledger.pushedIds(results.map((r) => r.id));
      options.onResolved?.(
        results.map((r) => r.id),
        Date.now(),
      );
      break;
    }
  }
}

/** Counts of every structure of a topic: all zero when nothing is left. */
export async function leftovers(redis: TestClient, topic: string, prefix = 'ackq'): Promise<Record<string, number>> {
  const tag = `{${prefix}:${topic}}`;
  const [ready, delayed, leased, messages, attempts, tokens, anchored, dead, deadInfo] = await Promise.all([
    redis.llen(`${tag}:ready`),
    redis.zcard(`${tag}:delayed`),
    // The encoding anchor (score +inf, a tokens field) is no message: left out.
    redis.zcount(`${tag}:leased`, '-inf', '(inf'),
    redis.hlen(`${tag}:messages`),
    redis.hlen(`${tag}:attempts`),
    redis.hlen(`${tag}:tokens`),
    redis.hexists(`${tag}:tokens`, ENCODING_ANCHOR),
    redis.zcard(`${tag}:dead`),
    redis.hlen(`${tag}:dead-info`),
  ]);
  return { ready, delayed, leased, messages, attempts, tokens: tokens - anchored, dead, deadInfo };
}

export const NOTHING_LEFT = {
  ready: 0,
  delayed: 0,
  leased: 0,
  messages: 0,
  attempts: 0,
  tokens: 0,
  dead: 0,
  deadInfo: 0,
};

/** Ids still stored in the topic's messages hash. */
export async function storedIds(redis: TestClient, topic: string, prefix = 'ackq'): Promise<string[]> {
  return redis.hkeys(`{${prefix}:${topic}}:messages`);
}

/**
 * The end every scenario shares: tallies the ledger against what Redis still stores, prints the
 * summary, and checks the promises all of them keep (no violation, nothing lost, nothing left
 * in Redis). `shown` (a seed, outages) is printed and shown with any violation; `details` only
 * printed. Returns the tally for the scenario's own checks.
 */
export async function finishScenario(
  redis: TestClient,
  topic: string,
  ledger: FaultLedger,
  name: string,
  { shown = {}, details = {} }: { shown?: Record<string, unknown>; details?: Record<string, unknown> } = {},
): Promise<LedgerTally> {
  const tally = ledger.tally({ leftInRedis: await storedIds(redis, topic) });
  printSummary(name, tally, { ...shown, ...details, ...ledger.counters() });
  expect({ ...shown, violations: tally.violations }).toEqual({ ...shown, violations: [] });
  expect(tally.lost).toBe(0);
  expect(await leftovers(redis, topic)).toEqual(NOTHING_LEFT);
  return tally;
}
