import type { OnApplicationShutdown } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ConsumerRegistry } from '../consumer/consumer-registry';
import { QueueConnection } from '../engine/queue-connection';
import { QueueEngine } from '../engine/queue-engine';
import { QueueInspector, type DeadSweep } from '../engine/queue-inspector';
import { InvalidOptionError, QueueClosedError } from '../errors';
import { asError } from '../errors/error-text';
import type {
  ConsumerLiveness,
  DeadLetter,
  NackOptions,
  NackResult,
  PushManyItem,
  PushOptions,
  PushResult,
  QueueConsumer,
  QueueGauges,
  QueueHandlerFn,
  QueueHandlerOptions,
  QueueStats,
  RedisAckQueueConsumerApi,
  RedisAckQueueEvent,
  RedisAckQueueOptions,
  RedisAckQueueProducerApi,
  ReserveOptions,
  ReservedMessage,
  Topic,
} from '../interfaces';
import { QueueLogger } from '../observability/queue-logger';
import type { QueueTracing } from '../observability/tracing/queue-tracing';
import { tracingFor } from '../observability/tracing/tracing-option';
import { encodePushItem, MessageIds } from './push-items';
import { QueueEvents } from './queue-events';
import { resolveReserveRequest, resolveServiceSettings, type ServiceSettings } from './settings';
import {
  assertBounded,
  assertDuration,
  assertIdList,
  assertInteger,
  assertReserved,
  assertTopic,
  optionsOf,
} from './validation';

/**
 * The queue's public API: push, reserve, ack, nack, inspect, consume. It checks arguments
 * and the closed state, reports events, and leaves every state change to the engine (one
 * Lua script each, timed by the Redis server's clock). Usable with `new` outside Nest; the
 * module provides the same class through dependency injection.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a {@link RedisAckQueueError} with a stable `code`.
 */
export class RedisAckQueueService implements RedisAckQueueProducerApi, RedisAckQueueConsumerApi, OnApplicationShutdown {
  private readonly events = new QueueEvents();
  readonly events$: Observable<RedisAckQueueEvent> = this.events.stream$;

  private readonly settings: ServiceSettings;
  private readonly connection: QueueConnection;
  private readonly engine: QueueEngine;
  private readonly inspector: QueueInspector;
  private readonly consumers: ConsumerRegistry;
  private readonly ids = new MessageIds();
  private readonly tracing: QueueTracing | undefined;
  private closing: Promise<void> | undefined;

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
    const stored = await this.connection.within(
      'push',
      topic,
      this.engine.push(topic, encoded),
      this.settings.replicatedPushes?.timeoutMs,
    );
    return encoded.map(([id], i) => {
      if (stored[i]) this.events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: !stored[i] };
    });
  }

  async reserve<T = unknown>(topic: Topic<T>, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]> {
    this.assertOpen('reserve');
    assertTopic(topic);
    const reserved = this.engine.reserveAny<T>(topic, resolveReserveRequest(options, this.settings));
    const { messages, buried } = await this.connection.within('reserve', topic, reserved);
    for (const { id, attempt } of buried) this.events.emit({ type: 'dead', topic, id, attempt });
    for (const { id, attempt } of messages) this.events.emit({ type: 'reserved', topic, id, attempt });
    return messages;
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

  async ack(message: ReservedMessage): Promise<boolean> {
    this.assertOpen('ack');
    assertReserved(message);
    const [acked] = await this.connection.within(
      'ack',
      message.topic,
      this.engine.settle('ack', message.topic, [message]),
    );
    if (acked) this.events.emit({ type: 'acked', topic: message.topic, id: message.id, attempt: message.attempt });
    return acked;
  }

  async nack(message: ReservedMessage, options?: NackOptions | null): Promise<NackResult> {
    this.assertOpen('nack');
    assertReserved(message);
    const { delayMs = this.settings.backoff(message.attempt, options?.error), error } = optionsOf(options);
    assertDuration('delayMs', delayMs);
    const maxAttempts = message.maxAttempts ?? this.settings.maxAttempts;
    assertBounded('maxAttempts', maxAttempts);
    const result = await this.connection.within(
      'nack',
      message.topic,
      this.engine.nack(message.topic, message, { delayMs, maxAttempts, error }),
    );
    if (result === 'lost') return result;
    const event = {
      topic: message.topic,
      id: message.id,
      attempt: message.attempt,
      error: error === undefined ? undefined : asError(error),
    };
    this.events.emit({ type: result === 'retry' ? 'retried' : 'dead', ...event });
    return result;
  }

  async extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean> {
    this.assertOpen('extend a lease');
    assertReserved(message);
    assertBounded('leaseMs', leaseMs);
    const [extended] = await this.connection.within(
      'extend a lease',
      message.topic,
      this.engine.settle('extend', message.topic, [message], leaseMs),
    );
    return extended;
  }

  async release(message: ReservedMessage): Promise<boolean> {
    this.assertOpen('release');
    assertReserved(message);
    const [released] = await this.connection.within(
      'release',
      message.topic,
      this.engine.settle('release', message.topic, [message]),
    );
    return released;
  }

  async stats(topic: string): Promise<QueueStats> {
    assertTopic(topic);
    return this.connection.within('read stats', topic, this.inspector.stats(topic));
  }

  async gauges(topic: string): Promise<QueueGauges> {
    assertTopic(topic);
    return this.connection.within('read gauges', topic, this.inspector.gauges(topic));
  }

  consumerLiveness(): ConsumerLiveness[] {
    return this.consumers.liveness();
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

  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueHandlerFn<T>,
    options?: QueueHandlerOptions | null,
  ): QueueConsumer {
    this.assertOpen('consume');
    assertTopic(topic);
    if (typeof handler !== 'function')
      throw new InvalidOptionError('handler', handler, 'a function (payload, context)');
    return this.consumers.consume(
      topic,
      this.tracing ? this.tracing.wrap(topic, handler) : handler,
      optionsOf(options),
    );
  }

  async waitUntilIdle(topic: string, options?: { timeoutMs?: number } | null): Promise<void> {
    await this.events.untilIdle(topic, optionsOf(options).timeoutMs ?? 30_000, () => this.stats(topic));
  }

  close(drainMs = this.settings.drainMs): Promise<void> {
    this.closing ??= (async () => {
      await this.consumers.closeAll(drainMs);
      this.events.complete();
      await this.connection.close();
    })();
    return this.closing;
  }

  /** Nest calls this last on shutdown: consumers have drained, connections close now. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private assertOpen(operation: string): void {
    if (this.closing) throw new QueueClosedError(operation);
  }
}
