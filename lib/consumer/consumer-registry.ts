import type { CancelSignals } from '../engine/redis/cancel-signals';
import type { QueueEngine } from '../engine/queue-engine';
import { assertShareable } from '../engine/stores/topic-limits';
import { InvalidOptionError } from '../errors';
import type {
  ConsumerLiveness,
  QueueBatchHandlerFn,
  QueueConsumer,
  QueueHandlerFn,
  QueueHandlerOptions,
  TopicLimits,
} from '../interfaces';
import type { QueueTracing } from '../observability/tracing/queue-tracing';
import { pickLimits } from '../queue/limit-settings';
import { resolveConsumerSettings, type ConsumerSettings, type ServiceSettings } from '../queue/settings';
import { batchingHandler } from './batch-collector';
import { writeLimitsFirst } from './limits-first';
import type { ConsumerReporting } from './failed-deliveries';
import { FlowSweeper } from './flow-sweeper';
import { PollerLiveness } from './poller-liveness';
import { TopicConsumer } from './topic-consumer';

/** How long a new consumer waits for its cancel subscription before it takes messages anyway. */
const CANCELS_READY_WAIT_MS = 2_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * The one set of running consumers of a service: `consume()` starts them here, and the
 * service's close (or the Nest app's shutdown) drains them all from here.
 */
export class ConsumerRegistry {
  /** Each running consumer, with what a health check sees of it. */
  private readonly consumers = new Map<QueueConsumer, PollerLiveness>();
  /** The fleet-wide limits each running consumer wrote when it started, with its topic. */
  private readonly limitsOf = new Map<QueueConsumer, { topic: string; limits: TopicLimits }>();
  /** The topic and resolved maxAttempts of each running consumer. */
  private readonly attemptsOf = new Map<QueueConsumer, { topic: string; maxAttempts: number }>();
  /** One pub/sub connection for every consumer of the service, opened by the first. */
  readonly cancels: CancelSignals;
  /** Repairs the flows of the consumed topics when a reserve asks. */
  private readonly sweeper: FlowSweeper;

  constructor(
    private readonly engine: QueueEngine,
    private readonly report: ConsumerReporting,
    private readonly defaults: ConsumerSettings & Pick<ServiceSettings, 'limits'>,
    private readonly tracing: QueueTracing | undefined,
  ) {
    this.cancels = engine.cancelSignals();
    this.sweeper = new FlowSweeper(engine.flows, report);
  }

  /**
   * Starts a consumer of `topic` that runs `handler` per message, or per batch when
   * `options.batch` is set; options are checked (a bad one throws before anything starts).
   */
  consume<T>(
    topic: string,
    handler: QueueHandlerFn<T> | QueueBatchHandlerFn<T>,
    options: QueueHandlerOptions,
  ): QueueConsumer {
    if (typeof handler !== 'function')
      throw new InvalidOptionError('handler', handler, 'a function (payload, context)');
    const { batch, concurrency = this.defaults.concurrency } = options;
    // A batch handler runs behind a collector: the poller sees one handler per message.
    const perMessage = batch
      ? batchingHandler(handler as QueueBatchHandlerFn<T>, batch, concurrency)
      : (handler as QueueHandlerFn<T>);
    return this.start(topic, perMessage, options);
  }

  private start<T>(topic: string, handler: QueueHandlerFn<T>, options: QueueHandlerOptions): QueueConsumer {
    const settings = resolveConsumerSettings(options, this.defaults);
    const limits = pickLimits(options) ?? this.defaults.limits(topic);
    if (limits) assertShareable(limits, this.engine.partitionCount(topic));
    const wake = this.engine.wakeSignal(topic);
    // Script answers are noted per topic by the engine; the blocking wait's, per consumer, here.
    const liveness = new PollerLiveness(topic, this.engine);
    wake.onAnswer = liveness.answered;
    const poller: TopicConsumer<T> = new TopicConsumer<T>(topic, handler, settings, {
      engine: this.engine,
      wake,
      ...this.report,
      cancels: this.cancels,
      tracing: this.tracing?.deliveries(topic),
      onClosed: () => {
        liveness.stop();
        this.consumers.delete(poller);
        this.limitsOf.delete(poller);
        this.attemptsOf.delete(poller);
      },
      flowRepair: this.sweeper.wanted,
    });
    this.consumers.set(poller, liveness);
    this.attemptsOf.set(poller, { topic, maxAttempts: settings.maxAttempts });
    if (limits) this.limitsOf.set(poller, { topic, limits });
    const closed = () => !this.consumers.has(poller);
    // Without limits of its own, it withdraws those declared before, unless a consumer of this
    // service declares some for the topic (they stay, whichever started first).
    const settled = () => closed() || (!limits && this.declares(topic));
    // Its first message starts once it hears cancels too (a cancel published before that reaches the
    // handler only at its next heartbeat); bounded, so a slow subscription never holds the consumer.
    const hearing = Promise.race([this.cancels.ready(topic), delay(CANCELS_READY_WAIT_MS)]);
    void Promise.all([
      writeLimitsFirst(this.engine.limits, topic, limits ?? null, this.report.logger, settled),
      hearing,
    ]).then(() => {
      if (!closed()) poller.start();
    });
    return poller;
  }

  /** Whether a running consumer of this service declares limits for `topic`. */
  private declares(topic: string): boolean {
    return [...this.limitsOf.values()].some((declared) => declared.topic === topic);
  }

  /** The limits the running consumers wrote, by topic (the last started consumer's, where several). */
  declaredLimits(): Map<string, TopicLimits> {
    return new Map([...this.limitsOf.values()].map(({ topic, limits }) => [topic, limits]));
  }

  /**
   * The maxAttempts a running consumer of `topic` applies to messages without their own (the
   * last started one's, where several); undefined when this service consumes no such topic.
   */
  maxAttemptsFor(topic: string): number | undefined {
    let found: number | undefined;
    for (const consumer of this.attemptsOf.values()) if (consumer.topic === topic) found = consumer.maxAttempts;
    return found;
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
    await this.sweeper.stop();
    await this.cancels.close();
  }
}
