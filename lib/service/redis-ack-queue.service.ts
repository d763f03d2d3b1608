import type { OnApplicationShutdown } from '@nestjs/common';
import { InvalidOptionError } from '../errors';
import { asError } from '../errors/error-text';
import { batchingHandler } from '../consumer/batch-collector';
import type {
  BatchOptions,
  ConsumerLiveness,
  NackOptions,
  NackResult,
  QueueBatchHandlerFn,
  QueueConsumer,
  QueueHandlerFn,
  QueueHandlerOptions,
  RedisAckQueueConsumerApi,
  RedisAckQueueLookupApi,
  RedisAckQueueProducerApi,
  RedisAckQueueScheduleApi,
  RedisAckQueueTopicsApi,
  ReserveOptions,
  ReservedMessage,
  Topic,
} from '../interfaces';
import { QueueTopicsFacade } from '../queue/queue-topics.facade';
import { resolveReserveRequest } from '../queue/settings';
import { assertBounded, assertDuration, assertReserved, assertTopic, optionsOf } from '../queue/validation';

/**
 * The queue's public API: push, reserve, ack, nack, inspect, consume. It checks arguments
 * and the closed state, reports events, and leaves every state change to the engine (one
 * Lua script each, timed by the Redis server's clock). Usable with `new` outside Nest; the
 * module provides the same class through dependency injection. It is built in layers, one
 * file each: producing and inspecting (queue-producer.facade.ts), look-up and cancel
 * (queue-lookup.facade.ts), pause (queue-pause.facade.ts), schedules
 * (queue-schedule.facade.ts), the topic registry (queue-topics.facade.ts); this file adds the consuming half.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a {@link RedisAckQueueError} with a stable `code`.
 */
export class RedisAckQueueService
  extends QueueTopicsFacade
  implements
    RedisAckQueueProducerApi,
    RedisAckQueueConsumerApi,
    RedisAckQueueLookupApi,
    RedisAckQueueScheduleApi,
    RedisAckQueueTopicsApi,
    OnApplicationShutdown
{
  async reserve<T = unknown>(topic: Topic<T>, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]> {
    this.assertOpen('reserve');
    assertTopic(topic);
    const request = resolveReserveRequest(options, this.settings);
    const noted = this.topicRegistry.note(topic);
    const reserved = noted
      ? noted.then(() => this.engine.reserveAny<T>(topic, request))
      : this.engine.reserveAny<T>(topic, request);
    const { messages, buried } = await this.connection.within('reserve', topic, reserved);
    for (const { id, attempt } of buried) this.events.emit({ type: 'dead', topic, id, attempt, reason: 'malformed' });
    for (const { id, attempt } of messages) this.events.emit({ type: 'reserved', topic, id, attempt });
    return messages;
  }

  async ack(message: ReservedMessage, result?: unknown): Promise<boolean> {
    this.assertOpen('ack');
    assertReserved(message);
    const kept = this.completeAck(message, result);
    const [acked] = await this.connection.within(
      'ack',
      message.topic,
      kept ?? this.engine.settle('ack', message.topic, [message]),
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
    if (result === 'retry') this.events.emit({ type: 'retried', ...event });
    else this.events.emit({ type: 'dead', ...event, reason: 'failed' });
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

  consumerLiveness(): ConsumerLiveness[] {
    return this.consumers.liveness();
  }

  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueBatchHandlerFn<T>,
    options: QueueHandlerOptions & { batch: BatchOptions },
  ): QueueConsumer;
  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueHandlerFn<T>,
    options?: QueueHandlerOptions | null,
  ): QueueConsumer;
  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueHandlerFn<T> | QueueBatchHandlerFn<T>,
    options?: QueueHandlerOptions | null,
  ): QueueConsumer {
    this.assertOpen('consume');
    assertTopic(topic);
    if (typeof handler !== 'function')
      throw new InvalidOptionError('handler', handler, 'a function (payload, context)');
    const { batch, concurrency = this.settings.concurrency } = optionsOf(options);
    // A batch handler runs behind a collector: the consumer sees one handler per message.
    const perMessage = batch
      ? batchingHandler(handler as QueueBatchHandlerFn<T>, batch, concurrency)
      : (handler as QueueHandlerFn<T>);
    const consumer = this.consumers.consume(
      topic,
      this.tracing ? this.tracing.wrap(topic, perMessage) : perMessage,
      optionsOf(options),
    );
    this.startScheduler();
    // Registered in the background: a failure is retried by the next push, reserve or consume.
    this.topicRegistry.note(topic)?.catch(() => undefined);
    return consumer;
  }

  async waitUntilIdle(topic: string, options?: { timeoutMs?: number } | null): Promise<void> {
    await this.events.untilIdle(topic, optionsOf(options).timeoutMs ?? 30_000, () => this.stats(topic));
  }

  close(drainMs = this.settings.drainMs): Promise<void> {
    this.closing ??= (async () => {
      await this.scheduler.stop();
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
}
