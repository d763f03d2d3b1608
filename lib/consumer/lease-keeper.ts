import type { ConsumerEngine } from '../engine/consumer-engine';
import { ConsumerShutdownError, LeaseLostError, RateLimitedError } from '../errors';
import { asError } from '../errors/error-text';
import type { QueueHandlerFn, ReservedMessage } from '../interfaces';
import type { ConsumerSettings } from '../queue/settings';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { FLOW_PARENT } from '../engine/codecs/wire-format';
import type { AckRoute } from './ack-batcher';
import { FailedDeliveries, type ConsumerReporting } from './failed-deliveries';
import { DeliveryControl } from './delivery-control';
import { DeliverySteps } from './delivery-steps';
import { deliveryWaitMs } from './delivery-timings';
import { abortHandler, HandlerContext, invokeHandler, withTimeout, type LeaseControls } from './handler-context';
import { messagesOf, newInFlight, type InFlight, type KeeperHooks } from './in-flight';
import { settleWithin } from '../common/settle-within';
import { NO_CODECS, type ValueCodecs } from '../queue/value-codecs';
import { openChildren, openMessage } from '../queue/sealed-messages';
import type { DeliveryTracing } from '../observability/tracing/queue-tracing';

/** How often the heartbeat extends the running leases: every third of a lease (ms). */
export function heartbeatMs(leaseMs: number): number {
  return Math.max(5, Math.floor(leaseMs / 3));
}

/**
 * Runs handlers and keeps their leases: heartbeats extend every running lease by a third
 * of its length, a refused extension reports the lease lost and aborts the handler's
 * signal, a timeout fails the delivery. It hands the ack of a resolved handler to the ack
 * batch (`completed`; the AckBatcher answers through `ackRoute`), nacks with backoff when it
 * fails, and at shutdown releases unfinished messages at once. It owns the running handlers
 * (DeliveryControl only reads them), the heartbeat timer and the nacks and releases under way.
 */
export class LeaseKeeper<T> {
  /** Handlers running now, by lease token. */
  private readonly inFlight = new Map<string, InFlight<T>>();
  /** Nacks and releases not answered yet: shutdown waits for them. */
  private readonly settling = new Set<Promise<unknown>>();
  /** How the ack batch sends this keeper's acks and what their answers mean (see AckBatcher). */
  readonly ackRoute: AckRoute<InFlight<T>> = {
    send: (entries) => this.control.sendAcks(entries),
    settled: (entry, acked) => (acked && !entry.cancelled ? this.acked(entry) : this.leaseLost(entry)),
    // A cancelled lease's ack is only a signal (see `finished`): its failure is nobody's error.
    failed: (entry, error) => !entry.cancelled && this.settleFailed(entry, error),
    rideAlong: (entry) => entry.completion === undefined,
  };
  private heartbeat: NodeJS.Timeout | undefined;
  private beating = false;
  /** Resolves the shutdown's wait once no handler runs. */
  private emptied: (() => void) | undefined;
  private readonly failures: FailedDeliveries;
  /** Cancels, progress and completed records (job control). */
  private readonly control: DeliveryControl<T>;
  /** What every handler's context may do to its own lease: one object, shared. */
  private readonly leases: LeaseControls;
  private readonly events: ConsumerReporting['events'];
  private readonly logger: ConsumerReporting['logger'];
  /** With the service's tracing: each handler runs in its delivery's context, its span ended in `finished`. */
  private readonly tracing: DeliveryTracing | undefined;
  /** The topics' codecs (see ValueCodecs): a sealed message is opened before its handler runs. */
  private readonly codecs: ValueCodecs;

  constructor(
    private readonly engine: ConsumerEngine,
    readonly topic: string,
    private readonly handler: QueueHandlerFn<T>,
    private readonly settings: ConsumerSettings,
    report: ConsumerReporting & { tracing?: DeliveryTracing },
    private readonly hooks: KeeperHooks<T>,
  ) {
    this.events = report.events;
    this.logger = report.logger;
    this.tracing = report.tracing;
    this.codecs = report.codecs ?? NO_CODECS;
    this.failures = new FailedDeliveries(engine, topic, settings, report);
    this.control = new DeliveryControl(engine, topic, report, this.inFlight);
    const steps = new DeliverySteps(engine, topic, (target) => this.stepRefused(target as InFlight<T>), this.codecs);
    this.leases = { extend: this.extend, progress: this.control.progress, step: steps.run };
  }

  get running(): number {
    return this.inFlight.size;
  }

  start(): void {
    this.heartbeat = setInterval(() => void this.beat(), heartbeatMs(this.settings.leaseMs));
  }

  /** Starts the handler; no promise or closure per message beyond the handler's own. */
  run(message: ReservedMessage<T>): void {
    const entry = newInFlight(message);
    this.inFlight.set(message.token, entry);
    if (this.events.observed || this.events.tally.active) entry.waitMs = deliveryWaitMs(message, this.settings.leaseMs);
    this.control.starting(entry);
    let work: Promise<unknown>;
    // A flow's parent reads its children's ends first: its context hands them over at once.
    if (message.flowRole !== undefined && (message.flowRole & FLOW_PARENT) !== 0) {
      work = this.engine.flows.recordOf(this.topic, message).then(async ({ children }) => {
        await openMessage(this.codecs, message);
        entry.children = await openChildren(this.codecs, this.topic, children);
        return this.invoke(entry);
      });
    } else if (message.sealed !== undefined) work = this.opened(entry);
    else work = this.invoke(entry);
    const { timeoutMs } = this.settings;
    if (timeoutMs !== undefined) work = withTimeout(entry, work, timeoutMs);
    work.then(
      (result: unknown) => this.finished(entry, undefined, result),
      (error: unknown) => this.finished(entry, { error }),
    );
  }

  /**
   * Its handler once a message a codec sealed is open (at once when its codec answered at once);
   * one that cannot be opened fails the delivery with PayloadDecodeError.
   */
  private opened(entry: InFlight<T>): Promise<unknown> {
    try {
      const opening = openMessage(this.codecs, entry.message);
      return opening ? opening.then(() => this.invoke(entry)) : this.invoke(entry);
    } catch (error) {
      return Promise.reject(asError(error));
    }
  }

  /**
   * Calls the handler (in its delivery's trace context, with tracing), with its context made now:
   * a sealed message's headers are read once it is open.
   */
  private invoke(entry: InFlight<T>): Promise<unknown> {
    const context = new HandlerContext(entry, this.leases);
    const { tracing } = this;
    const { message } = entry;
    if (!tracing) return invokeHandler(this.handler, message.payload, context);
    const trace = (entry.trace = tracing.start(message));
    return tracing.run(trace.context, invokeHandler, this.handler, message.payload, context);
  }

  /** Frees the handler's slot as soon as it settles, then acks or nacks. */
  private finished(entry: InFlight<T>, outcome: { error: unknown } | undefined, result?: unknown): void {
    const failure = entry.deferral ? { error: entry.deferral } : outcome;
    this.inFlight.delete(entry.message.token);
    entry.durationMs = Math.max(performance.now() - entry.started, 0.001);
    if (entry.trace) this.tracing!.settled(entry.trace, outcome !== undefined, outcome?.error);
    // Before the slot frees: a held topic's prefetched messages must not take it.
    if (failure?.error instanceof RateLimitedError && !entry.message.group) this.hooks.held(failure.error.delayMs);
    this.hooks.finished(entry.durationMs);
    if (this.inFlight.size === 0) this.emptied?.();
    if (entry.released) {
      // Refused, as the lease is gone: it tells the message that superseded it that it may start.
      if (entry.cancelled) this.hooks.completed(entry);
      return;
    }
    entry.settling = true;
    if (!failure) return this.hooks.completed(this.control.succeeded(entry, result));
    const settled = this.failures.settle(entry.message, failure.error, entry);
    this.track(
      settled.then(
        (held) => held || this.leaseLost(entry),
        (error: unknown) => this.settleFailed(entry, error),
      ),
    );
  }

  private acked(entry: InFlight<T>): void {
    const { message, durationMs, waitMs } = entry;
    const endedAt = entry.started + (durationMs ?? 0);
    this.events.tally.settled(this.topic, 'acked', durationMs, waitMs, undefined, endedAt, message.group);
    if (this.events.observed)
      this.events.emit({
        type: 'acked',
        topic: this.topic,
        id: message.id,
        attempt: message.attempt,
        durationMs,
        waitMs,
      });
  }

  /** An ack or nack failed: the lease runs out and the message is delivered again, nothing is lost. */
  private settleFailed(entry: InFlight<T>, error: unknown): void {
    const { id, attempt } = entry.message;
    this.events.emit({ type: 'error', topic: this.topic, id, attempt, error: asError(error) });
  }

  /** What a handler's `context.extendLease` does. */
  private readonly extend: LeaseControls['extend'] = async (target, ms) => {
    const [extended] = await this.engine.settle('extend', this.topic, [target.message], ms);
    if (!extended) this.leaseLost(target as InFlight<T>);
    return extended;
  };

  /** A step's store was refused: the lease is gone (unless the delivery already ended, or was cancelled). */
  private stepRefused(entry: InFlight<T>): void {
    if (!entry.settling && !entry.released) this.leaseLost(entry);
  }

  /** Shutdown waits for `work` (a call that settles leases) before it ends. */
  private track(work: Promise<unknown>): void {
    const tracked = work.finally(() => this.settling.delete(tracked));
    this.settling.add(tracked);
  }

  /** Extends every running lease in one call; a refused one is reported as lost. */
  private async beat(): Promise<void> {
    const live = [...this.inFlight.values()].filter((e) => !e.settling && !e.released && !e.lost);
    if (this.beating || live.length === 0) return;
    this.beating = true;
    try {
      const flags = await this.engine.settle('extend', this.topic, messagesOf(live), this.settings.leaseMs);
      flags.forEach((extended, i) => !extended && !live[i].settling && !live[i].released && this.leaseLost(live[i]));
    } catch (error) {
      this.events.emit({ type: 'error', topic: this.topic, error: asError(error) });
    } finally {
      this.beating = false;
    }
  }

  private leaseLost(entry: InFlight<T>): void {
    if (entry.lost) return;
    entry.lost = true;
    const error = new LeaseLostError(this.topic, entry.message.id);
    abortHandler(entry, error);
    this.logger.warn(error.message);
    this.events.tally.leaseLost(this.topic);
    this.events.emit({
      type: 'lease-lost',
      topic: this.topic,
      id: entry.message.id,
      attempt: entry.message.attempt,
      error,
    });
  }

  /**
   * Lets running handlers finish until `deadline` (epoch ms), then releases the rest at
   * once without counting the attempt, and waits for every nack and release (the acks
   * handed to the batch are the AckBatcher's to drain).
   */
  async close(deadline: number): Promise<void> {
    // With nothing running there is nothing to wait for (settleWithin would wait out the drain time).
    if (this.inFlight.size > 0) {
      this.logger.log(MESSAGES.draining(this.topic, this.inFlight.size, Math.max(0, deadline - Date.now())));
      const emptied = new Promise<void>((resolve) => (this.emptied = resolve));
      await settleWithin(emptied, Math.max(0, deadline - Date.now()));
    }
    clearInterval(this.heartbeat);
    this.control.close();
    const left = [...this.inFlight.values()];
    if (left.length > 0) {
      for (const entry of left) {
        entry.released = true;
        abortHandler(entry, new ConsumerShutdownError(this.topic));
      }
      try {
        await this.engine.settle('release', this.topic, messagesOf(left));
        this.logger.warn(MESSAGES.drainLeftovers(this.topic, left.length));
      } catch (error) {
        // Their leases expire and they are delivered again: late, but not lost.
        this.events.emit({ type: 'error', topic: this.topic, error: asError(error) });
      }
    }
    await Promise.all(this.settling);
  }
}
