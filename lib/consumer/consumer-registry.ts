import { openBlockingConnection, type RedisClient } from '../engine/connection';
import type { QueueEngine } from '../engine/queue-engine';
import type { ConsumerLiveness, QueueConsumer, QueueHandlerFn, QueueHandlerOptions } from '../interfaces';
import { assertShareable, TopicLimitsStore } from '../engine/topic-limits';
import { pickLimits } from '../queue/limit-settings';
import { resolveConsumerSettings, type ConsumerSettings, type ServiceSettings } from '../queue/settings';
import { CancelSignals } from '../engine/cancel-signals';
import { writeLimitsFirst } from './limits-first';
import type { ConsumerReporting } from './failed-deliveries';
import { PollerLiveness } from './poller-liveness';
import { QueuePoller } from './queue-poller';
import { BlockingWakeSignal } from '../engine/wake-signal';

/**
 * The one set of running consumers of a service: `consume()` starts them here, and the
 * service's close (or the Nest app's shutdown) drains them all from here.
 */
export class ConsumerRegistry {
  /** Each running consumer, with what a health check sees of it. */
  private readonly consumers = new Map<QueueConsumer, PollerLiveness>();
  /** One pub/sub connection for every consumer of the service, opened by the first. */
  readonly cancels: CancelSignals;
  /** Where consumers write their topic's limits before they start. */
  private readonly limits: TopicLimitsStore;

  constructor(
    private readonly engine: QueueEngine,
    private readonly client: RedisClient,
    private readonly report: ConsumerReporting,
    private readonly defaults: ConsumerSettings & Pick<ServiceSettings, 'limits'>,
  ) {
    this.limits = new TopicLimitsStore(engine.scripts, engine.layouts);
    this.cancels = new CancelSignals(client, (topic) => engine.layouts.get(topic).partitions.map((k) => k.cancelled));
  }

  /** Starts a consumer of `topic`; options are checked (a bad one throws before anything starts). */
  consume<T>(topic: string, handler: QueueHandlerFn<T>, options: QueueHandlerOptions): QueueConsumer {
    const settings = resolveConsumerSettings(options, this.defaults);
    const limits = pickLimits(options) ?? this.defaults.limits(topic);
    if (limits) assertShareable(limits, this.engine.partitionCount(topic));
    const wakeKey = this.engine.layouts.get(topic).home.wake;
    const wake = new BlockingWakeSignal(openBlockingConnection(this.client, `ackq:${topic}`), wakeKey);
    const liveness = new PollerLiveness(topic);
    wake.onAnswer = liveness.answered;
    const poller: QueuePoller<T> = new QueuePoller<T>(topic, handler, settings, {
      engine: liveness.watch(this.engine),
      wake,
      ...this.report,
      cancels: this.cancels,
      onClosed: () => {
        liveness.stop();
        this.consumers.delete(poller);
      },
    });
    this.consumers.set(poller, liveness);
    if (!limits) poller.start();
    else {
      const closed = () => !this.consumers.has(poller);
      void writeLimitsFirst(this.limits, topic, limits, this.report.logger, closed).then(() => {
        if (!closed()) poller.start();
      });
    }
    return poller;
  }

  get size(): number {
    return this.consumers.size;
  }

  /** What a health check sees of each running consumer. */
  liveness(): ConsumerLiveness[] {
    return [...this.consumers.values()].map((liveness) => liveness.snapshot());
  }

  /** Drains every running consumer (each releases what did not finish within drainMs). */
  async closeAll(drainMs?: number): Promise<void> {
    await Promise.all([...this.consumers.keys()].map((consumer) => consumer.close(drainMs)));
    await this.cancels.close();
  }
}
