import type { ConsumerEngine } from '../engine/consumer-engine';
import type { ReservedMessage } from '../interfaces';
import type { ConsumerSettings } from '../queue/settings';
import { DEFAULTS, LIMITS } from '../common/redis-ack-queue.constants';
import { asError } from '../errors/error-text';
import type { AckBatcher } from './ack-batcher';
import type { ConsumerReporting } from './failed-deliveries';
import { FailurePause } from './failure-pause';
import { messagesOf, type InFlight } from './in-flight';
import { heartbeatMs } from './lease-keeper';
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
}

/** Where the poller starts the messages it reserved: the running handlers (a LeaseKeeper). */
export interface MessageRunner<T> {
  /** Handlers running now. */
  readonly running: number;
  run(message: ReservedMessage<T>): void;
}

/**
 * The fetching part of one consumer of one topic: the loop that reserves while slots are free
 * (the acks of finished handlers riding along), keeps a small prefetch, and waits for a wake-up
 * or the next due time when nothing is ready. It owns the loop, the reserves under way, the
 * prefetch buffer and the release of what it reserved and never started (on a timer of its own,
 * what waited a whole heartbeat). It hands messages to the keeper (`run`) and asks the ack batch
 * to let a reserve carry acks; it hears from neither: the TopicConsumer tells it of free slots.
 */
export class QueuePoller<T> {
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
  /** Hands back what waited in the prefetch a whole heartbeat interval. */
  private staleCheck: NodeJS.Timeout | undefined;
  /** Releases of messages that never started, not answered yet: close waits for them. */
  private readonly releasing = new Set<Promise<unknown>>();

  constructor(
    readonly topic: string,
    private readonly settings: ConsumerSettings,
    private readonly deps: PollerDeps,
    private readonly keeper: MessageRunner<T>,
    private readonly acks: Pick<AckBatcher<InFlight<T>>, 'carry'>,
  ) {
    this.partitions = new PartitionTurns(deps.engine.partitionCount(topic));
    this.buffer = new PrefetchBuffer(settings.concurrency, settings.batchSize);
    this.failures = new FailurePause(topic, deps);
  }

  start(): void {
    this.loopDone = this.loop();
    // As often as the heartbeat: no prefetched lease runs out unextended.
    this.staleCheck = setInterval(() => this.handBack(this.buffer.takeStale()), heartbeatMs(this.settings.leaseMs));
  }

  /**
   * A handler finished after `ms`: returns the next prefetched message to start in its slot (none
   * once stopping), and wakes the loop to fill what is left.
   */
  slotFreed(ms: number): ReservedMessage<T> | undefined {
    const next = this.stopping ? undefined : this.buffer.next(ms);
    this.changed?.();
    return next;
  }

  /** The topic is held (a handler's rateLimited): what this consumer prefetched must not start either. */
  topicHeld(): void {
    this.handBack(this.buffer.takeAll());
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
    // After a wait a reserve probes alone: it goes out at once rather than batched (see ReserveRequest).
    const request = { count, leaseMs, maxAttempts, afterWait: this.probing };
    // The acks of the handlers that finished meanwhile ride along: one script call, not two.
    // (Of a partitioned topic they may belong to other partitions: they go on their own.)
    const carried = this.partitions.count === 1 ? LIMITS.idsPerCall : 0;
    try {
      const reserved = await this.acks.carry(carried, (acks) =>
        this.deps.engine.reserve<T>(this.topic, partition, request, messagesOf(acks)),
      );
      const { messages, nextDueInMs } = reserved;
      reportReserve(this.topic, this.deps, reserved);
      if (reserved.flowRepair) this.deps.flowRepair?.(this.topic);
      this.deps.tracing?.reserved(messages);
      this.failures.recovered();
      if (this.stopping) {
        if (messages.length > 0) this.handBack(messages);
        return;
      }
      if (reserved.paused) {
        // Paused: prefetched messages go back (attempt not counted); wait for resume's wake-up.
        this.handBack(this.buffer.takeAll());
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
      if (late.length > 0) this.handBack(late);
      this.drained = this.partitions.report(partition, messages.length < count, nextDueInMs);
      if (messages.length === count) this.probing = false;
    } catch (error) {
      this.fetchError = error;
    }
  }

  /** Releases leases that never started a handler, last first so they keep their order at the head of ready. */
  private handBack(messages: ReservedMessage<T>[]): void {
    if (messages.length === 0) return;
    this.deps.tracing?.released(messages);
    const released = this.deps.engine
      .settle('release', this.topic, messages.reverse())
      .catch((error: unknown) => this.deps.events.emit({ type: 'error', topic: this.topic, error: asError(error) }));
    const tracked = released.finally(() => this.releasing.delete(tracked));
    this.releasing.add(tracked);
  }

  /**
   * Stops reserving: waits up to drainMs for the loop and the reserves under way, then hands
   * back at once what was prefetched and never started.
   */
  async stop(drainMs: number): Promise<void> {
    this.stopper.abort();
    clearInterval(this.staleCheck);
    await settleWithin(Promise.all([this.loopDone, ...this.fetches]), drainMs);
    this.handBack(this.buffer.takeAll());
  }

  /** After `stop` and the handlers' end: waits for its releases and closes its wait for wake-ups. */
  async close(): Promise<void> {
    await Promise.all(this.releasing);
    this.deps.wake.close();
  }

  private get stopping(): boolean {
    return this.stopper.signal.aborted;
  }
}
