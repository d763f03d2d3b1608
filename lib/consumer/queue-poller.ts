import type { ConsumerEngine } from '../engine/consumer-engine';
import type { QueueConsumer, QueueHandlerFn } from '../interfaces';
import type { ConsumerSettings } from '../queue/settings';
import { DEFAULTS, LIMITS } from '../common/redis-ack-queue.constants';
import { asError } from '../errors/error-text';
import type { ConsumerReporting } from './failed-deliveries';
import { FailurePause } from './failure-pause';
import { messagesOf } from './in-flight';
import { LeaseKeeper } from './lease-keeper';
import { PartitionTurns } from './partition-turns';
import { PrefetchBuffer } from './prefetch-buffer';
import { reportReserve } from './reserve-report';
import { settleWithin } from '../common/settle-within';
import type { WakeSignal } from '../engine/redis/wake-signal';
import type { DeliveryTracing } from '../observability/tracing/queue-tracing';

export interface PollerDeps extends ConsumerReporting {
  engine: ConsumerEngine;
  /** How the poller waits when nothing is ready; closed with the poller. */
  wake: WakeSignal;
  /** With the service's tracing: the spans of this consumer's deliveries. */
  tracing?: DeliveryTracing;
  /** A reserve found a flow of the topic that needs the sweep (see FlowSweeper). */
  flowRepair?(topic: string): void;
  onClosed(): void;
}

/**
 * One consumer of one topic: the loop that reserves while slots are free (the acks of
 * finished handlers riding along), keeps a small prefetch, and waits for a wake-up or the
 * next due time when nothing is ready. It owns the loop, the reserves under way and the
 * prefetch buffer; handlers, their leases and timers belong to its LeaseKeeper, and the ack
 * batch to the keeper's AckBatcher, which a reserve only asks to carry acks.
 */
export class QueuePoller<T> implements QueueConsumer {
  private readonly keeper: LeaseKeeper<T>;
  private readonly buffer: PrefetchBuffer<T>;
  private readonly failures: FailurePause;
  private readonly stopper = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
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
    readonly topic: string,
    handler: QueueHandlerFn<T>,
    private readonly settings: ConsumerSettings,
    private readonly deps: PollerDeps,
  ) {
    this.partitions = new PartitionTurns(deps.engine.partitionCount(topic));
    this.buffer = new PrefetchBuffer(settings.concurrency, settings.batchSize);
    this.failures = new FailurePause(topic, deps);
    this.keeper = new LeaseKeeper(deps.engine, topic, handler, settings, deps, {
      finished: (ms) => this.slotFreed(ms),
      beat: () => this.keeper.handBack(this.buffer.takeStale()),
      // The topic is held: what this consumer prefetched must not start either.
      held: () => this.keeper.handBack(this.buffer.takeAll()),
    });
  }

  get running(): number {
    return this.keeper.running;
  }

  start(): void {
    this.loopDone = this.loop();
    this.keeper.start();
  }

  close(drainMs = this.settings.drainMs): Promise<void> {
    this.closing ??= this.shutdown(drainMs);
    return this.closing;
  }

  /**
   * Keeps up to two reserves under way while slots are free, so Redis prepares the next
   * batch while this process runs the last one; waits for a wake-up once a reserve comes
   * back short (nothing more is ready).
   */
  private async loop(): Promise<void> {
    const { concurrency, batchSize } = this.settings;
    while (!this.stopping) {
      try {
        if (this.fetchError !== undefined) {
          const error = asError(this.fetchError);
          this.fetchError = undefined;
          throw error;
        }
        const prefetch = this.buffer.target;
        // Half the window per reserve lets two batches overlap; never more than batchSize.
        const batch = Math.min(batchSize, Math.ceil((concurrency + prefetch) / 2));
        const free = concurrency + prefetch - this.keeper.running - this.buffer.size - this.requested;
        if (this.drained && this.fetches.size === 0) {
          const { nextDueInMs } = this.drained;
          this.drained = undefined;
          this.probing = true;
          await this.deps.wake.wait(nextDueInMs, this.stopper.signal);
          this.partitions.reset();
        } else if (free > 0 && this.fetches.size < (this.probing ? 1 : 2) && !this.drained) {
          this.fetch(Math.min(free, batch));
        } else {
          await settleWithin(
            new Promise<void>((resolve) => (this.changed = resolve)),
            DEFAULTS.idleWaitMs,
            this.stopper.signal,
          );
          // Let the other handlers that finish in this turn free their slots too: one bigger reserve.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (error) {
        if (this.stopping) return;
        await this.failures.after(error, this.stopper.signal);
      }
    }
  }

  private fetch(count: number): void {
    this.requested += count;
    const partition = this.partitions.next();
    const fetched = this.fetchBatch(partition, count);
    this.fetches.add(fetched);
    void fetched.finally(() => {
      this.requested -= count;
      this.fetches.delete(fetched);
      this.changed?.();
    });
  }

  /** Reserves and starts up to `count` messages; never rejects (the loop sees fetchError). */
  private async fetchBatch(partition: number, count: number): Promise<void> {
    const { leaseMs, maxAttempts } = this.settings;
    const request = { count, leaseMs, maxAttempts };
    // The acks of the handlers that finished meanwhile ride along: one script call, not two.
    // (Of a partitioned topic they may belong to other partitions: they go on their own.)
    const carried = this.partitions.count === 1 ? LIMITS.idsPerCall : 0;
    try {
      const reserved = await this.keeper.acks.carry(carried, (acks) =>
        this.deps.engine.reserve<T>(this.topic, partition, request, messagesOf(acks)),
      );
      const { messages, nextDueInMs } = reserved;
      reportReserve(this.topic, this.deps, reserved);
      if (reserved.flowRepair) this.deps.flowRepair?.(this.topic);
      this.deps.tracing?.reserved(messages);
      this.failures.recovered();
      if (this.stopping) {
        if (messages.length > 0) this.keeper.handBack(messages);
        return;
      }
      if (reserved.paused) {
        // Paused: prefetched messages go back (attempt not counted); wait for resume's wake-up.
        this.keeper.handBack(this.buffer.takeAll());
        this.drained = { nextDueInMs: -1 };
        return;
      }
      // Under a rate limit a message starts now or goes back: its start was counted at the reserve.
      const late = this.buffer.rateLimit(reserved.rateLimited);
      for (const message of messages) {
        if (this.keeper.running < this.settings.concurrency) this.keeper.run(message);
        else if (reserved.rateLimited) late.push(message);
        else this.buffer.add(message);
      }
      if (late.length > 0) this.keeper.handBack(late);
      this.drained = this.partitions.report(partition, messages.length < count, nextDueInMs);
      if (messages.length === count) this.probing = false;
    } catch (error) {
      this.fetchError = error;
    }
  }

  /** A handler finished: start the next prefetched message, wake the loop. */
  private slotFreed(ms: number): void {
    const next = this.stopping ? undefined : this.buffer.next(ms);
    if (next) this.keeper.run(next);
    this.changed?.();
  }

  /** Stop reserving, let running handlers finish within drainMs, hand the rest back at once. */
  private async shutdown(drainMs: number): Promise<void> {
    const deadline = Date.now() + drainMs;
    this.stopper.abort();
    await settleWithin(Promise.all([this.loopDone, ...this.fetches]), drainMs);
    // Prefetched messages never started: back to ready at once.
    this.keeper.handBack(this.buffer.takeAll());
    await this.keeper.close(deadline);
    this.deps.wake.close();
    this.deps.onClosed();
  }

  private get stopping(): boolean {
    return this.stopper.signal.aborted;
  }
}
