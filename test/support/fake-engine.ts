import type {
  ConsumerFlows,
  CompletedLease,
  CompletedPolicy,
  ConsumerEngine,
  DeferResult,
  HeldLease,
  ReserveRequest,
  ReserveResult,
  SettleAction,
  StepStoreResult,
} from '../../lib/engine/consumer-engine';
import type { DeadLetterReason, NackResult, ReservedMessage } from '../../lib/interfaces';

/** Kept before any test installs Jest's fake timers: `until` times out in real time. */
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;

export type EngineMethod = 'reserve' | 'nack' | 'bury' | 'defer' | 'readSteps' | 'storeStep' | SettleAction;

/** One call the consumer made, in arrival order. */
export interface EngineCall {
  method: EngineMethod;
  /** Date.now() when the call arrived. */
  at: number;
  /** Ids of the leases passed in (the acks riding along, for a reserve). */
  leases: string[];
  /** Ids a reserve leased. */
  reserved: string[];
  partition?: number;
  count?: number;
  leaseMs?: number;
}

interface Stored {
  id: string;
  payload: unknown;
  /** Deliveries that ended unacked (a lease's own attempt is in the lease, as in Redis). */
  attempts: number;
  maxAttempts?: number;
  headers: Record<string, string>;
  enqueuedAt: number;
  partition: number;
}

interface Held {
  stored: Stored;
  attempt: number;
  leaseDeadline: number;
}

/**
 * An in-memory ConsumerEngine with the Lua scripts' semantics: reserve acks then leases from
 * the head of ready, release puts leases back at the head (LPUSH, attempt not counted),
 * nack retries (into `delayed`) or buries, stale leases are refused. It logs every call and
 * can fail, hold, or lose leases on request.
 */
export class FakeEngine implements ConsumerEngine {
  readonly ready: Stored[][];
  readonly leases = new Map<string, Held>();
  readonly acked: string[] = [];
  readonly released: string[] = [];
  readonly delayed: string[] = [];
  readonly dead: string[] = [];
  readonly nacks: {
    id: string;
    attempt: number;
    delayMs: number;
    maxAttempts: number;
    error: unknown;
    result: NackResult;
  }[] = [];
  readonly calls: EngineCall[] = [];
  /** No flows here: no child results, no children to read. */
  readonly flows: ConsumerFlows = {
    resultBound: () => undefined,
    recordOf: () => Promise.resolve({ children: [] }),
    sweep: () => Promise.resolve(),
  };
  /** What reserve answers as nextDueInMs. */
  nextDueInMs = -1;
  /** What reserve answers as rateLimited. */
  rateLimited = false;
  /** Called when a release or a retry makes work ready (the scripts push a wake token). */
  onReady: (() => void) | undefined;
  private readonly failures: { method: EngineMethod; error: Error }[] = [];
  private readonly gates = new Map<EngineMethod, Promise<void>>();
  private readonly watchers = new Set<() => void>();
  private seq = 0;

  constructor(private readonly partitions = 1) {
    this.ready = Array.from({ length: partitions }, () => []);
  }

  /** Pushes messages `ids` (payload = id) to the tail of ready. */
  push(
    ids: string[],
    options: { partition?: number; maxAttempts?: number; headers?: Record<string, string> } = {},
  ): void {
    const { partition = 0, maxAttempts, headers = {} } = options;
    for (const id of ids)
      this.ready[partition].push({
        id,
        payload: id,
        attempts: 0,
        maxAttempts,
        headers,
        enqueuedAt: Date.now(),
        partition,
      });
  }

  readyIds(partition = 0): string[] {
    return this.ready[partition].map((m) => m.id);
  }

  callsOf(method: EngineMethod): EngineCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** The next call of `method` fails with `error` (before it changes anything); queue several for several. */
  failNext(method: EngineMethod, error = new Error(`fake ${method} failure`)): void {
    this.failures.push({ method, error });
  }

  /** Calls of `method` arrive (and are logged) but wait until the returned function is called. */
  hold(method: EngineMethod): () => void {
    let open!: () => void;
    this.gates.set(method, new Promise<void>((resolve) => (open = resolve)));
    return () => {
      this.gates.delete(method);
      open();
    };
  }

  /** The lease of `id` ran out and went elsewhere: every later call with it is refused. */
  loseLease(id: string): void {
    for (const [token, held] of this.leases) {
      if (held.stored.id !== id) continue;
      this.leases.delete(token);
      held.stored.attempts = held.attempt;
    }
  }

  /** Resolves once `check()` holds (checked now and after every call); rejects after `timeoutMs` real ms. */
  until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const watcher = () => {
        if (!check()) return;
        done();
        resolve();
      };
      const timer = realSetTimeout(() => {
        done();
        reject(new Error(`FakeEngine: not within ${timeoutMs} ms: ${what}`));
      }, timeoutMs);
      const done = () => {
        realClearTimeout(timer);
        this.watchers.delete(watcher);
      };
      this.watchers.add(watcher);
    });
  }

  partitionCount(): number {
    return this.partitions;
  }

  async reserve<T>(
    topic: string,
    partition: number,
    request: ReserveRequest,
    acks: HeldLease[],
  ): Promise<ReserveResult<T>> {
    const call = await this.arrive('reserve', acks, { partition, count: request.count, leaseMs: request.leaseMs });
    const acked = acks.map((lease) => this.ack(lease));
    const messages: ReservedMessage<T>[] = [];
    const list = this.ready[partition];
    while (messages.length < request.count && list.length > 0) {
      const stored = list.shift()!;
      const token = `token-${++this.seq}`;
      const held: Held = { stored, attempt: stored.attempts + 1, leaseDeadline: Date.now() + request.leaseMs };
      this.leases.set(token, held);
      const { id, headers, enqueuedAt } = stored;
      const maxAttempts = stored.maxAttempts ?? request.maxAttempts;
      messages.push({
        id,
        topic,
        payload: stored.payload as T,
        headers,
        enqueuedAt,
        attempt: held.attempt,
        maxAttempts,
        token,
        leaseDeadline: held.leaseDeadline,
      });
      call.reserved.push(id);
    }
    return this.answer({
      messages,
      nextDueInMs: this.nextDueInMs,
      paused: false,
      rateLimited: this.rateLimited,
      acked,
      buried: [],
      deadInRedis: 0,
    });
  }

  async settle(action: SettleAction, _topic: string, leases: HeldLease[], leaseMs = 0): Promise<boolean[]> {
    await this.arrive(action, leases, { leaseMs });
    const flags = leases.map((lease) => {
      if (action === 'ack') return this.ack(lease);
      const held = this.held(lease);
      if (!held) return false;
      if (action === 'extend') {
        held.leaseDeadline = lease.leaseDeadline = Date.now() + leaseMs;
      } else {
        this.leases.delete(lease.token);
        this.ready[held.stored.partition].unshift(held.stored);
        this.released.push(lease.id);
      }
      return true;
    });
    if (action === 'release' && flags.includes(true)) this.onReady?.();
    return this.answer(flags);
  }

  /** As bury.lua: each lease still held goes to the dead letters at once, with no attempt left to count. */
  async bury(_topic: string, leases: HeldLease[], _reason: DeadLetterReason, _error: unknown): Promise<boolean[]> {
    await this.arrive('bury', leases, {});
    const flags = leases.map((lease) => {
      if (!this.held(lease)) return false;
      this.leases.delete(lease.token);
      this.dead.push(lease.id);
      return true;
    });
    return this.answer(flags);
  }

  async nack(
    _topic: string,
    lease: HeldLease,
    failure: { delayMs: number; maxAttempts: number; error: unknown },
  ): Promise<NackResult> {
    await this.arrive('nack', [lease], {});
    const held = this.held(lease);
    let result: NackResult = 'lost';
    if (held) {
      this.leases.delete(lease.token);
      held.stored.attempts = held.attempt;
      result = held.attempt >= failure.maxAttempts ? 'dead' : 'retry';
      (result === 'dead' ? this.dead : this.delayed).push(lease.id);
    }
    this.nacks.push({ id: lease.id, attempt: held?.attempt ?? 0, ...failure, result });
    if (result === 'retry') this.onReady?.();
    return this.answer(result);
  }

  /** As defer.lua: a held lease goes to delayed without counting its attempt (no bound here). */
  async defer(_topic: string, lease: HeldLease, _delayMs: number, _maxDeferrals: number): Promise<DeferResult> {
    await this.arrive('defer', [lease], {});
    const held = this.held(lease);
    if (!held) return this.answer<DeferResult>('lost');
    this.leases.delete(lease.token);
    this.delayed.push(lease.id);
    return this.answer<DeferResult>('deferred');
  }

  /** This fake keeps no completed messages: acks delete, as with `keepCompleted` off. */
  completedPolicy(): CompletedPolicy | undefined {
    return undefined;
  }

  async complete(_topic: string, leases: CompletedLease[]): Promise<boolean[]> {
    return this.settle('ack', _topic, leases);
  }

  /** Progress of a lease still held is accepted (and not kept). */
  async progress(_topic: string, lease: HeldLease): Promise<boolean> {
    await Promise.resolve();
    return this.held(lease) !== undefined;
  }

  /** Each message's durable steps, by id: step name -> result JSON (as step.lua keeps them). */
  readonly steps = new Map<string, Map<string, string>>();

  /** As steps-read.lua: undefined once the lease is gone. */
  async readSteps(_topic: string, lease: HeldLease): Promise<Map<string, string> | undefined> {
    await this.arrive('readSteps', [lease], {});
    return this.held(lease) ? new Map(this.steps.get(lease.id)) : undefined;
  }

  /** As step.lua: only while the lease is held; the first result of a name stays. */
  async storeStep(_topic: string, lease: HeldLease, name: string, json: string): Promise<StepStoreResult> {
    await this.arrive('storeStep', [lease], {});
    if (!this.held(lease)) return { outcome: 'lost' };
    const steps = this.steps.get(lease.id) ?? new Map<string, string>();
    this.steps.set(lease.id, steps);
    const kept = steps.get(name);
    if (kept !== undefined) return { outcome: 'kept', json: kept };
    steps.set(name, json);
    return { outcome: 'stored' };
  }

  private held(lease: HeldLease): Held | undefined {
    const held = this.leases.get(lease.token);
    return held?.stored.id === lease.id ? held : undefined;
  }

  private ack(lease: HeldLease): boolean {
    if (!this.held(lease)) return false;
    this.leases.delete(lease.token);
    this.acked.push(lease.id);
    return true;
  }

  /** Logs the call, fails it if asked, waits at its gate. */
  private async arrive(method: EngineMethod, leases: HeldLease[], extra: Partial<EngineCall>): Promise<EngineCall> {
    const call: EngineCall = { method, at: Date.now(), leases: leases.map((l) => l.id), reserved: [], ...extra };
    this.calls.push(call);
    this.notify();
    const failure = this.failures.findIndex((f) => f.method === method);
    if (failure >= 0) throw this.failures.splice(failure, 1)[0].error;
    await this.gates.get(method);
    return call;
  }

  private answer<R>(result: R): R {
    // After the caller's continuation has run: a watcher sees the effect of the answer.
    setImmediate(() => this.notify());
    return result;
  }

  private notify(): void {
    for (const watcher of [...this.watchers]) watcher();
  }
}
