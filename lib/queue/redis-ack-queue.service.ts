import type { OnApplicationShutdown } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ConsumerRegistry } from '../consumer/consumer-registry';
import { QueueConnection } from '../engine/queue-connection';
import { QueueEngine } from '../engine/queue-engine';
import { QueueInspector, type DeadSweep } from '../engine/queue-inspector';
import { pingWithin } from '../engine/ping';
import { IdleTimeoutError, InvalidOptionError, QueueClosedError } from '../errors';
import { asError } from '../errors/error-text';
import type {
  ConsumerLiveness, DeadLetter, NackOptions, NackResult, PushManyItem, PushOptions, PushResult, QueueConsumer, QueueHandlerFn,
  QueueGauges, QueueHandlerOptions, QueueStats, RedisAckQueueEvent, RedisAckQueueOptions, ReserveOptions, ReservedMessage,
} from '../interfaces';
import type { QueueTracing } from '../observability/tracing/queue-tracing';
import { tracingFor } from '../observability/tracing/tracing-option';
import { DEFAULTS } from '../redis-ack-queue.constants';
import { encodePushItem, MessageIds } from './push-items';
import { QueueEvents } from './queue-events';
import { resolveReserveRequest, resolveServiceSettings, type ServiceSettings } from './settings';
import { assertBounded, assertDuration, assertIdList, assertInteger, assertReserved, assertTopic, optionsOf } from './validation';

/**
 * The queue's public API: push, reserve, ack, nack, inspect, consume. It checks arguments
 * and the closed state, reports events, and leaves every state change to the engine (one
 * Lua script each, timed by the Redis server's clock). Usable with `new` outside Nest; the
 * module provides the same class through dependency injection.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a {@link RedisAckQueueError} with a stable `code`.
 */
export class RedisAckQueueService implements OnApplicationShutdown {
  /** Queue events (pushed, reserved, acked, retried, dead, lease-lost, error); never payloads. Completes when the service closes. */
  readonly events$: Observable<RedisAckQueueEvent>;

  private readonly settings: ServiceSettings;
  private readonly connection: QueueConnection;
  private readonly engine: QueueEngine;
  private readonly inspector: QueueInspector;
  private readonly consumers: ConsumerRegistry;
  private readonly events = new QueueEvents();
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
    this.connection = new QueueConnection(options?.connection ?? DEFAULTS.connection);
    this.engine = new QueueEngine(this.connection.client, this.settings);
    this.inspector = new QueueInspector(this.engine.scripts, this.engine.layouts);
    this.consumers = new ConsumerRegistry(this.engine, this.connection.client, this.events, this.settings);
    this.events$ = this.events.stream$;
    this.tracing = tracingFor(options?.tracing);
  }

  /**
   * Waits until Redis answers (7.0 or newer); fails within connectTimeoutMs otherwise. The
   * module calls it at startup. Logs a warning when Redis has `appendonly` off. After a
   * failure, a connection the service opened itself stops reconnecting.
   * @throws {RedisConnectionError} when Redis does not answer within `connectTimeoutMs`,
   *   refuses the credentials, or is older than 7.0.
   * @throws {UnsafeRedisConfigError} when Redis uses an `allkeys-*` maxmemory-policy and
   *   `allowEviction` is not set.
   * @throws {RedisCommandError | RedisUnavailableError} when Redis refuses `INFO` or the
   *   connection fails meanwhile.
   */
  connect(): Promise<void> {
    return this.connection.open(this.settings.connectTimeoutMs, this.settings.allowEviction);
  }

  /**
   * Stores one message; resolves once Redis has it.
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @param payload - Any JSON value (`null` is fine, `undefined` is not).
   * @param options - The message's id, delay or due time, attempts and headers.
   * @returns The message's id, and whether it was a duplicate (an id that exists: nothing changed).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidPayloadError} when the payload is `undefined` or not plain JSON data.
   * @throws {PayloadTooLargeError} when its JSON is larger than `maxPayloadBytes`.
   * @throws {InvalidMessageIdError} when `options.id` is not 1-256 characters.
   * @throws {InvalidOptionError} when another option has a bad value.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {ReplicationTimeoutError} with `replicatedPushes`, when too few replicas confirmed in
   *   time (the message may be stored: push it again with the same id).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * const { id, duplicate } = await queue.push('order.created', { orderId: order.id }, { id: order.id });
   * await queue.push('order.payment-timeout', { orderId: order.id }, { delayMs: 15 * 60_000 });
   * ```
   */
  async push<T>(topic: string, payload: T, options?: PushOptions | null): Promise<PushResult> {
    const [result] = await this.pushMany(topic, [{ ...optionsOf(options), payload }]);
    return result;
  }

  /**
   * Stores many messages in one round trip; one bad item rejects the whole call before Redis is touched.
   * @returns One result per item, in order: its id, and whether it was a duplicate.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `items` is not an array, an item is not an object, or an
   *   option of one has a bad value.
   * @throws {InvalidPayloadError | PayloadTooLargeError | InvalidMessageIdError} as for `push`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {ReplicationTimeoutError} with `replicatedPushes`, when too few replicas confirmed in
   *   time (the messages may be stored: push them again with the same ids).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  pushMany<T>(topic: string, items: PushManyItem<T>[]): Promise<PushResult[]> {
    return this.tracing ? this.tracing.push(topic, items, (traced) => this.store(topic, traced)) : this.store(topic, items);
  }

  private async store(topic: string, items: PushManyItem[]): Promise<PushResult[]> {
    this.assertOpen('push');
    assertTopic(topic);
    if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
    const encoded = items.map((item) => encodePushItem(topic, item, this.settings.maxPayloadBytes, this.ids));
    const stored = await this.engine.push(topic, encoded);
    return encoded.map(([id], i) => {
      if (stored[i]) this.events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: !stored[i] };
    });
  }

  /**
   * Leases up to `count` messages; an empty array when none is ready. Partitions take turns.
   * Settle each one (ack, nack or release) before its lease runs out, or it is delivered
   * again. A message whose stored body is not valid JSON goes to the dead letters as `malformed`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `count`, `leaseMs` or `maxAttempts` is out of range.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async reserve<T = unknown>(topic: string, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]> {
    this.assertOpen('reserve');
    assertTopic(topic);
    const { messages, buried } = await this.engine.reserveAny<T>(topic, resolveReserveRequest(options, this.settings));
    for (const { id, attempt } of buried) this.events.emit({ type: 'dead', topic, id, attempt });
    for (const { id, attempt } of messages) this.events.emit({ type: 'reserved', topic, id, attempt });
    return messages;
  }

  /**
   * Checks that Redis holds `topic` with this process' partition count; PartitionCountMismatchError otherwise.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError} when Redis cannot be reached or refuses the call.
   */
  async checkTopic(topic: string): Promise<void> {
    this.assertOpen('check a topic');
    assertTopic(topic);
    await this.engine.layouts.verify(this.engine.layouts.get(topic), 'check a topic');
  }

  /**
   * Removes a message for good; false when nothing was acked (the lease was no longer this one, or no such message).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async ack(message: ReservedMessage): Promise<boolean> {
    this.assertOpen('ack');
    assertReserved(message);
    const [acked] = await this.engine.settle('ack', message.topic, [message]);
    if (acked) this.events.emit({ type: 'acked', topic: message.topic, id: message.id, attempt: message.attempt });
    return acked;
  }

  /**
   * Ends a lease after a failure: retried after the backoff (or delayMs) while attempts remain, else dead.
   * @returns `retry`, `dead`, or `lost` when the lease was no longer this one (nothing changed).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {InvalidOptionError} when `delayMs` is not a finite number >= 0, or the message's
   *   `maxAttempts` is out of range.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async nack(message: ReservedMessage, options?: NackOptions | null): Promise<NackResult> {
    this.assertOpen('nack');
    assertReserved(message);
    const { delayMs = this.settings.backoff(message.attempt, options?.error), error } = optionsOf(options);
    assertDuration('delayMs', delayMs);
    const maxAttempts = message.maxAttempts ?? this.settings.maxAttempts;
    assertBounded('maxAttempts', maxAttempts);
    const result = await this.engine.nack(message.topic, message, { delayMs, maxAttempts, error });
    if (result === 'lost') return result;
    const event = { topic: message.topic, id: message.id, attempt: message.attempt, error: error === undefined ? undefined : asError(error) };
    this.events.emit({ type: result === 'retry' ? 'retried' : 'dead', ...event });
    return result;
  }

  /**
   * Moves the lease deadline to now + leaseMs; false when the lease was already lost.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {InvalidOptionError} when `leaseMs` is not a whole number from 10 to 2^31-1.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean> {
    this.assertOpen('extend a lease');
    assertReserved(message);
    assertBounded('leaseMs', leaseMs);
    const [extended] = await this.engine.settle('extend', message.topic, [message], leaseMs);
    return extended;
  }

  /**
   * Hands a leased message back to the head of ready at once, not counting the attempt; false when the lease was lost.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError} when `message` is
   *   not one that `reserve()` returned (not an object, or a bad token, topic or id).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async release(message: ReservedMessage): Promise<boolean> {
    this.assertOpen('release');
    assertReserved(message);
    const [released] = await this.engine.settle('release', message.topic, [message]);
    return released;
  }

  /**
   * How many messages are in each state.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async stats(topic: string): Promise<QueueStats> {
    assertTopic(topic);
    return this.inspector.stats(topic);
  }

  /**
   * {@link QueueGauges}: the counts of `stats` and the age of the oldest ready message (for metrics and health).
   * @throws As `stats`.
   */
  async gauges(topic: string): Promise<QueueGauges> {
    assertTopic(topic);
    return this.inspector.gauges(topic);
  }

  /** One PING's round trip (ms), for health checks; rejects when Redis does not answer within `timeoutMs`. */
  ping(timeoutMs = 1_000): Promise<number> {
    return pingWithin(this.connection.client, timeoutMs);
  }

  /** {@link ConsumerLiveness} of each consumer running in this process, for health checks. */
  consumerLiveness(): ConsumerLiveness[] {
    return this.consumers.liveness();
  }

  /**
   * A page of dead letters, oldest first.
   * @param options.offset - How many to skip (a whole number >= 0). Default 0.
   * @param options.limit - Most to return (1-10,000). Default 100.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `offset` or `limit` is out of range.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async deadLetters<T = unknown>(topic: string, options?: { offset?: number; limit?: number } | null): Promise<DeadLetter<T>[]> {
    assertTopic(topic);
    const { offset = 0, limit = 100 } = optionsOf(options);
    assertInteger('offset', offset, 0);
    assertBounded('deadLetterPage', limit, 'limit');
    return this.inspector.deadLetters<T>(topic, offset, limit);
  }

  /**
   * Sends dead letters (the given ids, or all) back to ready with attempts reset; returns how many.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `ids` is not an array.
   * @throws {InvalidMessageIdError} when one of the ids is not 1-256 characters.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  requeueDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadRequeue', 'requeue dead letters', topic, ids);
  }

  /**
   * Deletes dead letters (the given ids, or all) for good; returns how many.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `ids` is not an array.
   * @throws {InvalidMessageIdError} when one of the ids is not 1-256 characters.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  purgeDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadPurge', 'purge dead letters', topic, ids);
  }

  private async sweepDead(sweep: DeadSweep, operation: string, topic: string, ids: string[] | undefined | null): Promise<number> {
    this.assertOpen(operation);
    assertTopic(topic);
    if (ids !== undefined && ids !== null) assertIdList(ids);
    return this.inspector.sweepDead(sweep, topic, ids ?? undefined);
  }

  /**
   * Runs `handler` for every message of `topic` until closed: leases, heartbeats, ack on resolve, nack with backoff on failure.
   * Unset options come from the service's. A bad argument throws at once.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `handler` is not a function or an option is out of range.
   */
  consume<T = unknown>(topic: string, handler: QueueHandlerFn<T>, options?: QueueHandlerOptions | null): QueueConsumer {
    this.assertOpen('consume');
    assertTopic(topic);
    if (typeof handler !== 'function') throw new InvalidOptionError('handler', handler, 'a function (payload, context)');
    return this.consumers.consume(topic, this.tracing ? this.tracing.wrap(topic, handler) : handler, optionsOf(options));
  }

  /**
   * Resolves when `topic` has nothing ready, delayed or leased (for tests); IdleTimeoutError after `timeoutMs`.
   * @param options.timeoutMs - How long to wait (ms). Default 30 s.
   * @throws {IdleTimeoutError} when the topic still has work after `timeoutMs`.
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  async waitUntilIdle(topic: string, options?: { timeoutMs?: number } | null): Promise<void> {
    const { timeoutMs = 30_000 } = optionsOf(options);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { ready, delayed, leased } = await this.stats(topic);
      if (ready + delayed + leased === 0) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new IdleTimeoutError(topic, timeoutMs);
      await this.events.nextOf(topic, Math.min(left, 50));
    }
  }

  /**
   * Drains this service's consumers (unfinished messages go back to ready at once), then closes its connections.
   * From the first call on, every method but `stats`, `deadLetters` and `waitUntilIdle` fails
   * with QueueClosedError; later calls return the same promise. A client you passed in is not closed.
   * @param drainMs - How long running handlers may finish (ms). Default: the service's
   *   `drainMs` (10 s unless set).
   */
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
