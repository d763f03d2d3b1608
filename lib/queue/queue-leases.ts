import { completedLease } from '../engine/consumer-engine';
import { completionExtra, encodeStoredValue } from '../engine/codecs/lookup-format';
import { InvalidStoredValueError } from '../errors';
import { asError } from '../errors/error-text';
import type { NackOptions, NackResult, ReserveOptions, ReservedMessage, Topic } from '../interfaces';
import type { QueueCore } from './queue-core';
import { resolveReserveRequest } from './settings';
import { assertBounded, assertDelay, assertReserved, assertTopic, optionsOf } from './validation';

/**
 * Consuming by hand (see RedisAckQueueConsumerApi): reserve, then ack, nack, extend or release
 * each lease. A part of RedisAckQueueService; handlers run by `consume()` go through the
 * consumer layer instead.
 */
export class QueueLeases {
  constructor(private readonly core: QueueCore) {}

  async reserve<T>(topic: Topic<T>, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]> {
    const { engine, events } = this.core;
    const { messages, buried, deadInRedis, expired } = await this.core.call('reserve', topic, () => {
      assertTopic(topic);
      const request = resolveReserveRequest(options, this.core.settings);
      const noted = engine.topics.note(topic);
      return noted ? noted.then(() => engine.reserveAny<T>(topic, request)) : engine.reserveAny<T>(topic, request);
    });
    for (let i = 0; i < deadInRedis; i++) events.tally.settled(topic, 'dead', undefined, undefined);
    events.expired(topic, expired);
    for (const { id, attempt } of buried) {
      events.emit({ type: 'dead', topic, id, attempt, reason: 'malformed' });
      events.tally.settled(topic, 'dead', undefined, undefined, 'malformed');
    }
    for (const { id, attempt } of messages) events.emit({ type: 'reserved', topic, id, attempt });
    return messages;
  }

  async ack(message: ReservedMessage, result?: unknown): Promise<boolean> {
    const [acked] = await this.core.call('ack', message?.topic, () => {
      assertReserved(message);
      return this.completeAck(message, result) ?? this.core.engine.settle('ack', message.topic, [message]);
    });
    if (acked) {
      this.core.events.emit({ type: 'acked', topic: message.topic, id: message.id, attempt: message.attempt });
      this.core.events.tally.settled(message.topic, 'acked', undefined, undefined);
    }
    return acked;
  }

  async nack(message: ReservedMessage, options?: NackOptions | null): Promise<NackResult> {
    const { settings, engine, events } = this.core;
    const { result, error } = await this.core.call('nack', message?.topic, async () => {
      assertReserved(message);
      const { delayMs = settings.backoff(message.attempt, options?.error), error } = optionsOf(options);
      assertDelay('delayMs', delayMs);
      const maxAttempts = message.maxAttempts ?? settings.maxAttempts;
      assertBounded('maxAttempts', maxAttempts);
      return { result: await engine.nack(message.topic, message, { delayMs, maxAttempts, error }), error };
    });
    if (result === 'lost') return result;
    const event = {
      topic: message.topic,
      id: message.id,
      attempt: message.attempt,
      error: error === undefined ? undefined : asError(error),
    };
    if (result === 'retry') events.emit({ type: 'retried', ...event });
    else events.emit({ type: 'dead', ...event, reason: 'failed' });
    events.tally.settled(message.topic, result === 'retry' ? 'retried' : 'dead', undefined, undefined, 'failed');
    return result;
  }

  async extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean> {
    const [extended] = await this.core.call('extend a lease', message?.topic, () => {
      assertReserved(message);
      assertBounded('leaseMs', leaseMs);
      return this.core.engine.settle('extend', message.topic, [message], leaseMs);
    });
    return extended;
  }

  async release(message: ReservedMessage): Promise<boolean> {
    const [released] = await this.core.call('release', message?.topic, () => {
      assertReserved(message);
      return this.core.engine.settle('release', message.topic, [message]);
    });
    return released;
  }

  /**
   * The ack of a message whose topic keeps completed messages, or of a flow's child:
   * complete.lua stores its record with `result`, or hands `result` to its parent. Undefined
   * otherwise (a plain ack then deletes it).
   * @throws {InvalidStoredValueError} when `result` is not JSON data or is over maxPayloadBytes.
   */
  private completeAck(message: ReservedMessage, result: unknown): Promise<boolean[]> | undefined {
    const policy = this.core.settings.keepCompleted(message.topic);
    const childBound = this.core.engine.flows.resultBound(message);
    if (!policy && childBound === undefined) return undefined;
    const bound = policy?.maxResultBytes ?? childBound!;
    const encoded = result === undefined ? undefined : encodeStoredValue(result, bound);
    if (encoded && 'problem' in encoded) throw new InvalidStoredValueError('result', message.topic, encoded.problem);
    return this.core.engine.complete(message.topic, [
      completedLease(message, completionExtra(encoded?.json, undefined)),
    ]);
  }
}
