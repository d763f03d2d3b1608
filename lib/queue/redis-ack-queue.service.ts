import type { OnApplicationShutdown } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ConsumerRegistry } from '../consumer/consumer-registry';
import { QueueConnection } from '../engine/queue-connection';
import { QueueEngine } from '../engine/queue-engine';
import { QueueInspector, type DeadSweep } from '../engine/queue-inspector';
import { IdleTimeoutError, InvalidOptionError, QueueClosedError } from '../errors';
import { asError } from '../errors/error-text';
import type {
  DeadLetter, NackOptions, NackResult, PushManyItem, PushOptions, PushResult, QueueConsumer, QueueHandlerFn,
  QueueHandlerOptions, QueueStats, RedisAckQueueEvent, RedisAckQueueOptions, ReserveOptions, ReservedMessage, Topic,
} from '../interfaces';
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
 */
export class RedisAckQueueService implements OnApplicationShutdown {
  /** Queue events (pushed, reserved, acked, retried, dead, lease-lost, error); never payloads. */
  readonly events$: Observable<RedisAckQueueEvent>;

  private readonly settings: ServiceSettings;
  private readonly connection: QueueConnection;
  private readonly engine: QueueEngine;
  private readonly inspector: QueueInspector;
  private readonly consumers: ConsumerRegistry;
  private readonly events = new QueueEvents();
  private readonly ids = new MessageIds();
  private closing: Promise<void> | undefined;

  constructor(options: RedisAckQueueOptions = {}) {
    this.settings = resolveServiceSettings(optionsOf(options));
    this.connection = new QueueConnection(options?.connection ?? DEFAULTS.connection);
    this.engine = new QueueEngine(this.connection.client, this.settings);
    this.inspector = new QueueInspector(this.engine.scripts, this.engine.layouts);
    this.consumers = new ConsumerRegistry(this.engine, this.connection.client, this.events, this.settings);
    this.events$ = this.events.stream$;
  }

  /** Waits until Redis answers (7.0 or newer); fails within connectTimeoutMs otherwise. */
  connect(): Promise<void> {
    return this.connection.open(this.settings.connectTimeoutMs, this.settings.allowEviction);
  }

  /** Stores one message; resolves once Redis has it. */
  async push<T = unknown>(topic: Topic<T>, payload: NoInfer<T>, options?: PushOptions | null): Promise<PushResult> {
    const [result] = await this.pushMany(topic, [{ ...optionsOf(options), payload }]);
    return result;
  }

  /** Stores many messages in one round trip; one bad item rejects the whole call before Redis is touched. */
  async pushMany<T = unknown>(topic: Topic<T>, items: PushManyItem<NoInfer<T>>[]): Promise<PushResult[]> {
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

  /** Leases up to `count` messages; an empty array when none is ready. Partitions take turns. */
  async reserve<T = unknown>(topic: Topic<T>, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]> {
    this.assertOpen('reserve');
    assertTopic(topic);
    const { messages, buried } = await this.engine.reserveAny<T>(topic, resolveReserveRequest(options, this.settings));
    for (const { id, attempt } of buried) this.events.emit({ type: 'dead', topic, id, attempt });
    for (const { id, attempt } of messages) this.events.emit({ type: 'reserved', topic, id, attempt });
    return messages;
  }

  /** Checks that Redis holds `topic` with this process' partition count; PartitionCountMismatchError otherwise. */
  async checkTopic(topic: string): Promise<void> {
    this.assertOpen('check a topic');
    assertTopic(topic);
    await this.engine.layouts.verify(this.engine.layouts.get(topic), 'check a topic');
  }

  /** Removes a message for good; false when nothing was acked (the lease was no longer this one, or no such message). */
  async ack(message: ReservedMessage): Promise<boolean> {
    this.assertOpen('ack');
    assertReserved(message);
    const [acked] = await this.engine.settle('ack', message.topic, [message]);
    if (acked) this.events.emit({ type: 'acked', topic: message.topic, id: message.id, attempt: message.attempt });
    return acked;
  }

  /** Ends a lease after a failure: retried after the backoff (or delayMs) while attempts remain, else dead. */
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

  /** Moves the lease deadline to now + leaseMs; false when the lease was already lost. */
  async extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean> {
    this.assertOpen('extend a lease');
    assertReserved(message);
    assertBounded('leaseMs', leaseMs);
    const [extended] = await this.engine.settle('extend', message.topic, [message], leaseMs);
    return extended;
  }

  /** Hands a leased message back to the head of ready at once, not counting the attempt; false when the lease was lost. */
  async release(message: ReservedMessage): Promise<boolean> {
    this.assertOpen('release');
    assertReserved(message);
    const [released] = await this.engine.settle('release', message.topic, [message]);
    return released;
  }

  /** How many messages are in each state. */
  async stats(topic: string): Promise<QueueStats> {
    assertTopic(topic);
    return this.inspector.stats(topic);
  }

  /** A page of dead letters, oldest first. */
  async deadLetters<T = unknown>(topic: Topic<T>, options?: { offset?: number; limit?: number } | null): Promise<DeadLetter<T>[]> {
    assertTopic(topic);
    const { offset = 0, limit = 100 } = optionsOf(options);
    assertInteger('offset', offset, 0);
    assertBounded('deadLetterPage', limit, 'limit');
    return this.inspector.deadLetters<T>(topic, offset, limit);
  }

  /** Sends dead letters (the given ids, or all) back to ready with attempts reset; returns how many. */
  requeueDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadRequeue', 'requeue dead letters', topic, ids);
  }

  /** Deletes dead letters (the given ids, or all) for good; returns how many. */
  purgeDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadPurge', 'purge dead letters', topic, ids);
  }

  private async sweepDead(sweep: DeadSweep, operation: string, topic: string, ids: string[] | undefined | null): Promise<number> {
    this.assertOpen(operation);
    assertTopic(topic);
    if (ids !== undefined && ids !== null) assertIdList(ids);
    return this.inspector.sweepDead(sweep, topic, ids ?? undefined);
  }

  /** Runs `handler` for every message of `topic` until closed: leases, heartbeats, ack on resolve, nack with backoff on failure. */
  consume<T = unknown>(topic: Topic<T>, handler: QueueHandlerFn<T>, options?: QueueHandlerOptions | null): QueueConsumer {
    this.assertOpen('consume');
    assertTopic(topic);
    if (typeof handler !== 'function') throw new InvalidOptionError('handler', handler, 'a function (payload, context)');
    return this.consumers.consume(topic, handler, optionsOf(options));
  }

  /** Resolves when `topic` has nothing ready, delayed or leased (for tests); IdleTimeoutError after `timeoutMs`. */
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

  /** Drains this service's consumers (unfinished messages go back to ready at once), then closes its connections. */
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
