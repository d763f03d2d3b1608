import { Logger } from '@nestjs/common';
import { HandlerTimeoutError, LeaseLostError } from '../errors';
import { asError } from '../errors/error-text';
import type { MessageContext, QueueConsumer, QueueHandlerFn, RedisAckQueueEvent, ReservedMessage } from '../interfaces';
import type { ConsumerSettings } from '../queue/settings';
import { DEFAULTS, LIMITS } from '../redis-ack-queue.constants';
import { MESSAGES } from '../redis-ack-queue.messages';
import type { RedisAckQueueService } from '../redis-ack-queue.service';
import type { RedisClient } from '../redis/redis-connection';
import { AckBatcher } from './ack-batcher';
import { PartitionTurns } from './partition-turns';

export interface PollerDeps {
  /** A connection of the poller's own, for blocking waits; closed with the poller. */
  blocking: RedisClient;
  wakeKey: string;
  emit(event: RedisAckQueueEvent): void;
  onClosed(): void;
}

interface InFlight<T> {
  message: ReservedMessage<T>;
  /** Made on first use: most handlers never look at their signal. */
  controller: AbortController | undefined;
  /** Ack or nack under way: a heartbeat miss is then no lost lease. */
  settling: boolean;
  /** Handed back at shutdown: the handler's late outcome no longer counts. */
  released: boolean;
  lost: boolean;
  /** performance.now() when the handler started. */
  started: number;
}

/**
 * A consumer holds at most this much expected handler work (by the average handler time)
 * reserved beyond its running handlers, so a free slot starts the next message without a
 * round trip. Slow handlers get no prefetch: other consumers keep the work.
 */
const PREFETCH_MS = 5;

/**
 * One consumer of one topic: the only owner of loops and timers. It reserves while slots
 * are free, waits on a blocking pop of the topic's wake key (or a timer for the next due
 * time) when there is nothing to do, heartbeats running leases, and acks or nacks each
 * message when its handler settles.
 */
export class QueuePoller<T> implements QueueConsumer {
  private readonly logger = new Logger('RedisAckQueue');
  /** Handlers running now, by lease token. */
  private readonly inFlight = new Map<string, InFlight<T>>();
  /** Nacks sent but not answered yet; shutdown waits for them (and for the acks). */
  private readonly settling = new Set<Promise<void>>();
  private readonly acks = new AckBatcher<InFlight<T>>(
    (entries) => this.engine.settleLeases('ack', this.topic, entries.map((e) => e.message)),
    (entry, acked) => acked || this.leaseLost(entry),
    (entry, error) => this.settleFailed(entry, error),
  );
  /** Resolves the shutdown's wait once no handler runs. */
  private emptied: (() => void) | undefined;
  /** Reserved messages waiting for a free slot, oldest first (see PREFETCH_MS). */
  private readonly buffer: ReservedMessage<T>[] = [];
  /** How many at the head of buffer were already there at the last heartbeat. */
  private stale = 0;
  /** Moving average of handler run time in ms; Infinity until one has finished. */
  private handlerMs = Infinity;
  private readonly stopper = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;
  private beating = false;
  private failures = 0;
  /** An outstanding blocking pop, kept across waits that a due-time timer cut short. */
  private pendingPop: Promise<void> | undefined;
  private popError: unknown;
  /** Wakes the loop when a slot frees or a reserve returns. */
  private changed: (() => void) | undefined;
  /** Reserves under way, and the slots they asked for. */
  private readonly fetches = new Set<Promise<void>>();
  private requested = 0;
  private fetchError: unknown;
  /** Every partition's last reserve came back short: the next one waits for a wake-up or a due time. */
  private drained: { nextDueInMs: number } | undefined;
  /** Partitions take turns; one that came back short sits out until the next wake-up. */
  private readonly partitions: PartitionTurns;
  /** After a wait, one reserve probes alone; a second overlaps only once one came back full. */
  private probing = true;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly engine: RedisAckQueueService,
    readonly topic: string,
    private readonly handler: QueueHandlerFn<T>,
    private readonly settings: ConsumerSettings,
    private readonly deps: PollerDeps,
  ) {
    this.partitions = new PartitionTurns(engine.partitionCount(topic));
  }

  get running(): number {
    return this.inFlight.size;
  }

  start(): void {
    this.loopDone = this.loop();
    this.heartbeat = setInterval(() => void this.beat(), Math.max(5, Math.floor(this.settings.leaseMs / 3)));
  }

  close(drainMs = this.engine.options.drainMs): Promise<void> {
    this.closing ??= this.shutdown(drainMs);
    return this.closing;
  }

  /**
   * Keeps up to two reserves under way while slots are free, so Redis prepares the next
   * batch while this process runs the last one; blocks on the wake key once a reserve
   * comes back short (nothing more is ready).
   */
  private async loop(): Promise<void> {
    const { concurrency, batchSize } = this.settings;
    while (!this.stopping) {
      try {
        if (this.fetchError !== undefined) throw this.takeFetchError();
        const prefetch = Math.min(batchSize, Math.floor((concurrency * PREFETCH_MS) / this.handlerMs));
        // Half the window per reserve lets two batches overlap; never more than batchSize.
        const batch = Math.min(batchSize, Math.ceil((concurrency + prefetch) / 2));
        const free = concurrency + prefetch - this.inFlight.size - this.buffer.length - this.requested;
        if (this.drained && this.fetches.size === 0) {
          const { nextDueInMs } = this.drained;
          this.drained = undefined;
          this.probing = true;
          await this.waitForWork(nextDueInMs);
          this.partitions.reset();
        } else if (free > 0 && this.fetches.size < (this.probing ? 1 : 2) && !this.drained) {
          this.fetch(Math.min(free, batch));
        } else {
          await this.until(new Promise<void>((resolve) => (this.changed = resolve)), DEFAULTS.idleWaitMs);
          // Let the other handlers that finish in this turn free their slots too: one bigger reserve.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (error) {
        if (this.stopping) return;
        await this.pause(error);
      }
    }
  }

  private fetch(count: number): void {
    this.requested += count;
    const partition = this.partitions.next();
    // The acks of the handlers that finished meanwhile ride along: one script call, not two.
    // (Of a partitioned topic they may belong to other partitions: they go on their own.)
    const acks = this.partitions.count === 1 ? this.acks.take(LIMITS.idsPerCall) : [];
    const fetched = this.fetchBatch(partition, count, acks);
    this.fetches.add(fetched);
    if (acks.length > 0) this.settling.add(fetched);
    void fetched.finally(() => {
      this.requested -= count;
      this.fetches.delete(fetched);
      this.settling.delete(fetched);
      this.changed?.();
    });
  }

  /** Acks `acks`, then reserves and starts up to `count` messages; never rejects (the loop sees fetchError). */
  private async fetchBatch(partition: number, count: number, acks: InFlight<T>[]): Promise<void> {
    const { leaseMs, maxAttempts } = this.settings;
    try {
      const leases = acks.map((entry) => entry.message);
      let reserved: Awaited<ReturnType<typeof this.engine.reservePartition<T>>>;
      try {
        reserved = await this.engine.reservePartition<T>(this.topic, partition, { count, leaseMs, maxAttempts }, leases);
      } catch (error) {
        // The script failed before it changed anything: the acks go on their own.
        this.acks.resend(acks);
        throw error;
      }
      const { messages, nextDueInMs, acked } = reserved;
      this.acks.settle(acks, acked);
      this.recovered();
      if (this.stopping) {
        if (messages.length > 0) await this.engine.release(this.topic, messages);
        return;
      }
      for (const message of messages) {
        if (this.inFlight.size < this.settings.concurrency) this.run(message);
        else this.buffer.push(message);
      }
      this.drained = this.partitions.report(partition, messages.length < count, nextDueInMs);
      if (messages.length === count) this.probing = false;
    } catch (error) {
      this.fetchError = error;
    }
  }

  private takeFetchError(): unknown {
    const error = this.fetchError;
    this.fetchError = undefined;
    return error;
  }

  /** Blocks until a push wakes us, the next due time comes, or the idle bound passes. */
  private async waitForWork(nextDueInMs: number): Promise<void> {
    if (!this.pendingPop) {
      const pop: Promise<void> = this.deps.blocking
        .blpop(this.deps.wakeKey, DEFAULTS.idleWaitMs / 1000)
        .then(
          () => undefined,
          (error: unknown) => void (this.popError = error),
        )
        .finally(() => {
          if (this.pendingPop === pop) this.pendingPop = undefined;
        });
      this.pendingPop = pop;
    }
    // A Node timer, not the pop's own timeout, wakes us for due messages: Redis checks
    // blocking timeouts only on its 100 ms cron tick. With nothing scheduled the pop's own
    // timeout ends the wait (one command per wait, not two).
    const timerMs = nextDueInMs >= 0 ? Math.min(nextDueInMs + 1, DEFAULTS.idleWaitMs) : DEFAULTS.idleWaitMs * 2;
    await this.until(this.pendingPop, timerMs);
    if (this.popError !== undefined) {
      const error = this.popError;
      this.popError = undefined;
      throw error;
    }
  }

  /** Starts the handler; no promise or closure per message beyond the handler's own. */
  private run(message: ReservedMessage<T>): void {
    const entry: InFlight<T> = { message, controller: undefined, settling: false, released: false, lost: false, started: performance.now() };
    this.inFlight.set(message.token, entry);
    let work: Promise<unknown>;
    try {
      work = Promise.resolve(this.handler(message.payload, new HandlerContext(entry, this.extendEntry)));
    } catch (error) {
      // A synchronous throw counts as a rejection.
      work = Promise.reject(error);
    }
    const { timeoutMs } = this.settings;
    if (timeoutMs !== undefined) work = withTimeout(entry, work, timeoutMs);
    work.then(
      () => this.finished(entry, undefined),
      (error: unknown) => this.finished(entry, { error }),
    );
  }

  /** Frees the handler's slot as soon as it settles, then acks or nacks. */
  private finished(entry: InFlight<T>, failure: { error: unknown } | undefined): void {
    this.inFlight.delete(entry.message.token);
    const ms = Math.max(performance.now() - entry.started, 0.001);
    this.handlerMs = this.handlerMs === Infinity ? ms : this.handlerMs + (ms - this.handlerMs) / 8;
    if (this.buffer.length > 0 && !this.stopping) {
      if (this.stale > 0) this.stale--;
      this.run(this.buffer.shift()!);
    }
    this.changed?.();
    if (this.inFlight.size === 0) this.emptied?.();
    if (entry.released) return;
    entry.settling = true;
    if (!failure) return this.acks.ack(entry);
    const settled = this.nack(entry, failure.error)
      .catch((error: unknown) => this.settleFailed(entry, error))
      .finally(() => this.settling.delete(settled));
    this.settling.add(settled);
  }

  /** An ack or nack failed: the lease runs out and the message is delivered again, nothing is lost. */
  private settleFailed(entry: InFlight<T>, error: unknown): void {
    const { id, attempt } = entry.message;
    this.deps.emit({ type: 'error', topic: this.topic, id, attempt, error: asError(error) });
  }

  private async nack(entry: InFlight<T>, error: unknown): Promise<void> {
    const delayMs = this.settings.backoff(entry.message.attempt, error);
    if ((await this.engine.nack(entry.message, { delayMs, error })) === 'lost') this.leaseLost(entry);
  }

  /** What a handler's `context.extendLease` does. */
  private readonly extendEntry = async (entry: InFlight<T>, ms: number): Promise<boolean> => {
    const [extended] = await this.engine.extendLeases(this.topic, [entry.message], ms);
    if (!extended) this.leaseLost(entry);
    return extended;
  };

  /**
   * Hands back the prefetched messages that have waited a whole heartbeat interval (a slow
   * handler holds the slots): other consumers can take them, and no lease runs out unextended.
   */
  private releaseStale(): void {
    const waited = this.buffer.splice(0, this.stale);
    this.stale = this.buffer.length;
    if (waited.length === 0) return;
    this.handBack(waited);
    // No more prefetch until a handler finishes again and shows how long handlers take now.
    this.handlerMs = Infinity;
  }

  /** Releases leases that never started a handler; a failure only lets them expire. */
  private handBack(messages: ReservedMessage<T>[]): void {
    // Each is pushed onto the head of ready in turn: the last first keeps their order.
    const released: Promise<void> = this.engine
      .release(this.topic, messages.reverse())
      .then(
        () => undefined,
        (error: unknown) => this.deps.emit({ type: 'error', topic: this.topic, error: asError(error) }),
      )
      .finally(() => this.settling.delete(released));
    this.settling.add(released);
  }

  /** Extends every running lease in one call; a refused one is reported as lost. */
  private async beat(): Promise<void> {
    this.releaseStale();
    const live = [...this.inFlight.values()].filter((e) => !e.settling && !e.released && !e.lost);
    if (this.beating || live.length === 0) return;
    this.beating = true;
    try {
      const flags = await this.engine.settleLeases('extend', this.topic, live.map((e) => e.message), this.settings.leaseMs);
      flags.forEach((extended, i) => !extended && !live[i].settling && !live[i].released && this.leaseLost(live[i]));
    } catch (error) {
      this.deps.emit({ type: 'error', topic: this.topic, error: asError(error) });
    } finally {
      this.beating = false;
    }
  }

  private leaseLost(entry: InFlight<T>): void {
    if (entry.lost) return;
    entry.lost = true;
    const error = new LeaseLostError(this.topic, entry.message.id);
    abort(entry, error);
    this.logger.warn(error.message);
    this.deps.emit({ type: 'lease-lost', topic: this.topic, id: entry.message.id, attempt: entry.message.attempt, error });
  }

  /** Stop reserving, let running handlers finish within drainMs, release the rest at once. */
  private async shutdown(drainMs: number): Promise<void> {
    const deadline = Date.now() + drainMs;
    this.stopper.abort();
    await this.until(Promise.all([this.loopDone, ...this.fetches]), drainMs, false);
    // Prefetched messages never started: back to ready at once.
    if (this.buffer.length > 0) this.handBack(this.buffer.splice(0));
    const running = this.inFlight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.emptied = resolve));
    await this.until(running, Math.max(0, deadline - Date.now()), false);
    clearInterval(this.heartbeat);
    const left = [...this.inFlight.values()];
    if (left.length > 0) {
      for (const entry of left) {
        entry.released = true;
        abort(entry, new Error('The consumer is shutting down'));
      }
      try {
        await this.engine.release(this.topic, left.map((e) => e.message));
        this.logger.warn(MESSAGES.drainLeftovers(this.topic, left.length));
      } catch (error) {
        // Their leases expire and they are delivered again: late, but not lost.
        this.deps.emit({ type: 'error', topic: this.topic, error: asError(error) });
      }
    }
    await Promise.all([this.acks.drain(), ...this.settling]);
    this.deps.blocking.disconnect();
    this.deps.onClosed();
  }

  private async pause(error: unknown): Promise<void> {
    if (this.failures++ === 0) {
      this.logger.warn(MESSAGES.consumerError(this.topic, asError(error).message));
      this.deps.emit({ type: 'error', topic: this.topic, error: asError(error) });
    }
    await this.until(undefined, Math.min(100 * 2 ** this.failures, 5_000));
  }

  private recovered(): void {
    if (this.failures === 0) return;
    this.failures = 0;
    this.logger.log(MESSAGES.consumerResumed(this.topic));
  }

  private get stopping(): boolean {
    return this.stopper.signal.aborted;
  }

  /** Resolves when `promise` settles or `ms` pass, and (unless told otherwise) on stop. */
  private until(promise: Promise<unknown> | undefined, ms: number, onStop = true): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.stopper.signal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (onStop) signal.addEventListener('abort', done);
      promise?.then(done, done);
    });
  }
}

function abort(entry: InFlight<unknown>, reason: Error): void {
  (entry.controller ??= new AbortController()).abort(reason);
}

/** Fails `work` with a HandlerTimeoutError (and aborts the handler's signal) after `timeoutMs`. */
function withTimeout(entry: InFlight<unknown>, work: Promise<unknown>, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = new HandlerTimeoutError(timeoutMs);
      abort(entry, error);
      reject(error);
    }, timeoutMs);
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** A handler's second argument: one object per message, its accessors on the prototype. */
class HandlerContext<T> implements MessageContext {
  readonly id: string;
  readonly topic: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly headers: Record<string, string>;
  readonly enqueuedAt: number;
  readonly #entry: InFlight<T>;
  readonly #extend: (entry: InFlight<T>, ms: number) => Promise<boolean>;

  constructor(entry: InFlight<T>, extend: (entry: InFlight<T>, ms: number) => Promise<boolean>) {
    const { message } = entry;
    this.id = message.id;
    this.topic = message.topic;
    this.attempt = message.attempt;
    this.maxAttempts = message.maxAttempts;
    this.headers = message.headers;
    this.enqueuedAt = message.enqueuedAt;
    this.#entry = entry;
    this.#extend = extend;
  }

  get signal(): AbortSignal {
    return (this.#entry.controller ??= new AbortController()).signal;
  }

  extendLease(ms: number): Promise<boolean> {
    return this.#extend(this.#entry, ms);
  }
}
