import type { Observable } from 'rxjs';
import { ConsumerRegistry } from '../consumer/consumer-registry';
import { QueueConnection } from '../engine/queue-connection';
import { QueueEngine } from '../engine/queue-engine';
import { QueueInspector, type DeadSweep } from '../engine/queue-inspector';
import { TopicRegistry } from '../engine/topic-registry';
import { InvalidOptionError, QueueClosedError } from '../errors';
import type {
  DeadLetter,
  PushManyItem,
  PushOptions,
  PushResult,
  QueueGauges,
  QueueStats,
  RedisAckQueueEvent,
  RedisAckQueueOptions,
  Topic,
} from '../interfaces';
import { QueueLogger } from '../observability/queue-logger';
import type { QueueTracing } from '../observability/tracing/queue-tracing';
import { tracingFor } from '../observability/tracing/tracing-option';
import { encodePushItem, MessageIds } from './push-items';
import { QueueEvents } from './queue-events';
import { resolveServiceSettings, type ServiceSettings } from './settings';
import { assertBounded, assertIdList, assertInteger, assertTopic, optionsOf } from './validation';

/**
 * The producing and inspecting half of {@link RedisAckQueueService} (see
 * {@link RedisAckQueueProducerApi}), and the parts both halves share: settings, connection,
 * engine, events and the closed state. Not used on its own.
 * @internal
 */
export abstract class QueueProducerFacade {
  /** @internal */
  protected readonly events = new QueueEvents();
  readonly events$: Observable<RedisAckQueueEvent> = this.events.stream$;
  /** @internal */
  protected readonly settings: ServiceSettings;
  /** @internal */
  protected readonly connection: QueueConnection;
  /** @internal */
  protected readonly engine: QueueEngine;
  /** @internal */
  protected readonly inspector: QueueInspector;
  /** @internal */
  protected readonly consumers: ConsumerRegistry;
  /** @internal */
  protected readonly topicRegistry: TopicRegistry;
  /** @internal */
  protected readonly ids = new MessageIds();
  /** @internal */
  protected readonly tracing: QueueTracing | undefined;
  /** @internal */
  protected closing: Promise<void> | undefined;

  /**
   * Checks the options and sets up the connection, which opens on first use: call
   * {@link RedisAckQueueService.connect} to fail fast.
   * @param options - Every option may be left out; {@link RedisAckQueueOptions} gives the defaults.
   * @throws {InvalidOptionError} when an option has a bad value, or `connection` has no known form.
   * @throws {InvalidTopicError} when `prefix`, or a topic name in `topics`, is not a valid name.
   */
  constructor(options: RedisAckQueueOptions = {}) {
    this.settings = resolveServiceSettings(optionsOf(options));
    const logger = new QueueLogger(this.settings.logLevel);
    this.connection = new QueueConnection(options?.connection, this.settings.commandTimeoutMs, logger);
    this.engine = new QueueEngine(this.connection.client, this.settings);
    this.inspector = new QueueInspector(this.engine.scripts, this.engine.layouts);
    this.topicRegistry = new TopicRegistry(this.engine.scripts, this.settings.prefix, logger);
    this.consumers = new ConsumerRegistry(
      this.engine,
      this.connection.client,
      { events: this.events, logger },
      this.settings,
    );
    this.tracing = tracingFor(options?.tracing);
  }

  connect(): Promise<void> {
    return this.connection.open(this.settings.connectTimeoutMs, this.settings.allowEviction);
  }

  async push<T = unknown>(topic: Topic<T>, payload: NoInfer<T>, options?: PushOptions | null): Promise<PushResult> {
    const [result] = await this.pushMany(topic, [{ ...optionsOf(options), payload }]);
    return result;
  }

  pushMany<T = unknown>(topic: Topic<T>, items: PushManyItem<NoInfer<T>>[]): Promise<PushResult[]> {
    return this.tracing
      ? this.tracing.push(topic, items, (traced) => this.store(topic, traced))
      : this.store(topic, items);
  }

  private async store(topic: string, items: PushManyItem[]): Promise<PushResult[]> {
    this.assertOpen('push');
    assertTopic(topic);
    if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
    const encoded = items.map((item) => encodePushItem(topic, item, this.settings.maxPayloadBytes, this.ids));
    // The first push of this service to the topic registers it first (see TopicRegistry).
    const noted = this.topicRegistry.note(topic);
    const stored = await this.connection.within(
      'push',
      topic,
      noted ? noted.then(() => this.engine.push(topic, encoded)) : this.engine.push(topic, encoded),
      this.settings.replicatedPushes?.timeoutMs,
    );
    return encoded.map(([id], i) => {
      if (stored[i]) this.events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: !stored[i] };
    });
  }

  async checkTopic(topic: string): Promise<void> {
    this.assertOpen('check a topic');
    assertTopic(topic);
    await this.connection.within(
      'check a topic',
      topic,
      this.engine.layouts.verify(this.engine.layouts.get(topic), 'check a topic'),
    );
  }

  async stats(topic: string): Promise<QueueStats> {
    assertTopic(topic);
    return this.connection.within('read stats', topic, this.inspector.stats(topic));
  }

  async gauges(topic: string): Promise<QueueGauges> {
    assertTopic(topic);
    return this.connection.within('read gauges', topic, this.inspector.gauges(topic));
  }

  async deadLetters<T = unknown>(
    topic: Topic<T>,
    options?: { offset?: number; limit?: number } | null,
  ): Promise<DeadLetter<T>[]> {
    assertTopic(topic);
    const { offset = 0, limit = 100 } = optionsOf(options);
    assertInteger('offset', offset, 0);
    assertBounded('deadLetterPage', limit, 'limit');
    return this.connection.within('read dead letters', topic, this.inspector.deadLetters<T>(topic, offset, limit));
  }

  requeueDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadRequeue', 'requeue dead letters', topic, ids);
  }

  purgeDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadPurge', 'purge dead letters', topic, ids);
  }

  private async sweepDead(
    sweep: DeadSweep,
    operation: string,
    topic: string,
    ids: string[] | undefined | null,
  ): Promise<number> {
    this.assertOpen(operation);
    assertTopic(topic);
    if (ids !== undefined && ids !== null) assertIdList(ids);
    return this.connection.within(operation, topic, this.inspector.sweepDead(sweep, topic, ids ?? undefined));
  }

  async ping(timeoutMs?: number): Promise<number> {
    this.assertOpen('ping');
    return this.connection.ping(timeoutMs);
  }

  /** @internal */
  protected assertOpen(operation: string): void {
    if (this.closing) throw new QueueClosedError(operation);
  }
}
