import type { QueueConsumer, QueueHandlerFn } from '../interfaces';
import type { ConsumerSettings } from '../queue/settings';
import { AckBatcher } from './ack-batcher';
import type { InFlight } from './in-flight';
import { LeaseKeeper } from './lease-keeper';
import { QueuePoller, type PollerDeps } from './queue-poller';

export interface TopicConsumerDeps extends PollerDeps {
  onClosed(): void;
}

/**
 * One consumer of one topic, as three owners side by side (as River's producer, executor and
 * completer): fetching (QueuePoller: reserves, prefetch, waits), running (LeaseKeeper: handlers,
 * leases, heartbeats, timeouts) and completing (AckBatcher: the ack batch). It builds each once
 * and wires them one way: the poller hands messages to the keeper and lets a reserve carry the
 * batch's acks, the keeper hands acks to the batch; what the keeper reports (a free slot, a held
 * topic) comes here, and this decides what the poller and keeper do next. None calls back up.
 */
export class TopicConsumer<T> implements QueueConsumer {
  private readonly poller: QueuePoller<T>;
  private readonly keeper: LeaseKeeper<T>;
  private readonly acks: AckBatcher<InFlight<T>>;
  private closing: Promise<void> | undefined;

  constructor(
    readonly topic: string,
    handler: QueueHandlerFn<T>,
    private readonly settings: ConsumerSettings,
    private readonly deps: TopicConsumerDeps,
  ) {
    this.keeper = new LeaseKeeper(deps.engine, topic, handler, settings, deps, {
      finished: (ms) => this.slotFreed(ms),
      held: () => this.poller.topicHeld(),
      completed: (entry) => this.acks.ack(entry),
    });
    this.acks = new AckBatcher(this.keeper.ackRoute);
    this.poller = new QueuePoller(topic, settings, deps, this.keeper, this.acks);
  }

  get running(): number {
    return this.keeper.running;
  }

  start(): void {
    this.poller.start();
    this.keeper.start();
  }

  close(drainMs = this.settings.drainMs): Promise<void> {
    this.closing ??= this.shutdown(drainMs);
    return this.closing;
  }

  /** A handler finished: the next prefetched message takes its slot. */
  private slotFreed(ms: number): void {
    const next = this.poller.slotFreed(ms);
    if (next) this.keeper.run(next);
  }

  /** Stop reserving, let running handlers finish within drainMs, hand the rest back at once. */
  private async shutdown(drainMs: number): Promise<void> {
    const deadline = Date.now() + drainMs;
    await this.poller.stop(drainMs);
    await this.keeper.close(deadline);
    await this.acks.drain();
    await this.poller.close();
    this.deps.onClosed();
  }
}
