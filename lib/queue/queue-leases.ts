import { completedLease } from '../engine/consumer-engine';
import { completionExtra, encodeStoredValue } from '../engine/codecs/lookup-format';
import { InvalidStoredValueError, PayloadDecodeError } from '../errors';
import { asError, errorSummary } from '../errors/error-text';
import { DEFAULTS } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { openMessage } from './sealed-messages';
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
    const opened = await this.opened(topic, messages);
    for (const { id, attempt } of opened) events.emit({ type: 'reserved', topic, id, attempt });
    return opened;
  }

  /**
   * The reserved messages with those a codec sealed opened (see docs/codecs.md), as a consumer
   * opens them before its handler. One sealed by a codec this process lacks is deferred for a
   * process that has it (no attempt counted, as a consumer does); one that cannot be opened
   * otherwise goes to the dead letters (`undecodable`). Neither is returned.
   */
  private async opened<T>(topic: string, messages: ReservedMessage<T>[]): Promise<ReservedMessage<T>[]> {
    if (!messages.some(({ sealed }) => sealed !== undefined)) return messages;
    const kept = await Promise.all(
      messages.map(async (message) => {
        try {
          await openMessage(this.core.codecs, message);
          return true;
        } catch (error) {
          if (!(error instanceof PayloadDecodeError)) throw error;
          await this.core.call('reserve', topic, () => this.unopened(message, error));
          return false;
        }
      }),
    );
    return messages.filter((_, i) => kept[i]);
  }

  /** Ends the lease of a reserved message that could not be opened (see {@link opened}). */
  private async unopened(message: ReservedMessage, error: PayloadDecodeError): Promise<void> {
    const { engine, events, logger, settings } = this.core;
    const { topic, id, attempt } = message;
    const maxAttempts = message.maxAttempts ?? settings.maxAttempts;
    if (error.reason === 'no-codec') {
      const delayMs = DEFAULTS.noCodecRetryMs;
      const deferred = await engine.defer(topic, message, delayMs, settings.maxDeferrals);
      if (deferred === 'deferred') {
        logger.log(MESSAGES.deferred(topic, id, attempt, delayMs));
        events.emit({ type: 'deferred', topic, id, attempt, delayMs });
        return;
      }
      if (deferred === 'lost') return;
      // Deferred maxDeferrals times already: this one counts as an attempt, as a consumer's does.
      logger.warn(MESSAGES.overDeferred(topic, id, settings.maxDeferrals));
      const result = await engine.nack(topic, message, { delayMs, maxAttempts, error });
      if (result === 'lost') return;
      if (result === 'retry') events.emit({ type: 'retried', topic, id, attempt, error });
      else events.emit({ type: 'dead', topic, id, attempt, error, reason: 'failed' });
      events.tally.settled(
        topic,
        result === 'retry' ? 'retried' : 'dead',
        undefined,
        undefined,
        'failed',
        undefined,
        message.group,
      );
      return;
    }
    const [buried] = await engine.bury(topic, [message], 'undecodable', error, maxAttempts);
    if (!buried) return;
    logger.error(MESSAGES.deadLettered(topic, id, attempt, 'undecodable', errorSummary(error)));
    events.emit({ type: 'dead', topic, id, attempt, error, reason: 'undecodable' });
    events.tally.settled(topic, 'dead', undefined, undefined, 'undecodable', undefined, message.group);
  }

  async ack(message: ReservedMessage, result?: unknown): Promise<boolean> {
    const [acked] = await this.core.call('ack', message?.topic, () => {
      assertReserved(message);
      return this.completeAck(message, result) ?? this.core.engine.settle('ack', message.topic, [message]);
    });
    if (acked) {
      this.core.events.emit({ type: 'acked', topic: message.topic, id: message.id, attempt: message.attempt });
      this.core.events.tally.settled(message.topic, 'acked', undefined, undefined, undefined, undefined, message.group);
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
    const { group } = message;
    events.tally.settled(
      message.topic,
      result === 'retry' ? 'retried' : 'dead',
      undefined,
      undefined,
      'failed',
      undefined,
      group,
    );
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
    return this.completeWith(message, encoded?.json);
  }

  /** complete.lua with the result's JSON, sealed first (`"s"`) where the topic has a codec, as a consumer's is. */
  private async completeWith(message: ReservedMessage, json: string | undefined): Promise<boolean[]> {
    const { codecs, engine } = this.core;
    const extra =
      json !== undefined && codecs.writer(message.topic)
        ? completionExtra(undefined, undefined, await codecs.seal(message.topic, json))
        : completionExtra(json, undefined);
    return engine.complete(message.topic, [completedLease(message, extra)]);
  }
}
