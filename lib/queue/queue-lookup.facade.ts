import { completionExtra, deadLetterInfo, encodeStoredValue } from '../engine/lookup-format';
import { MessageLookup } from '../engine/message-lookup';
import { InvalidOptionError, InvalidStoredValueError } from '../errors';
import type {
  ListOptions,
  MessageInfo,
  MessageState,
  RedisAckQueueLookupApi,
  ReservedMessage,
  Topic,
} from '../interfaces';
import { QueueProducerFacade } from './queue-producer.facade';
import { assertBounded, assertInteger, assertMessageId, assertTopic, optionsOf } from './validation';

const STATES: readonly MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed'];

/**
 * Looking messages up, listing them by state and cancelling them (see
 * {@link RedisAckQueueLookupApi}). A layer of {@link RedisAckQueueService}, not used on its own.
 * @internal
 */
export abstract class QueueLookupFacade extends QueueProducerFacade implements RedisAckQueueLookupApi {
  /** @internal */
  protected readonly lookup = new MessageLookup(this.engine.scripts, this.engine.layouts, this.settings.maxAttempts);

  async get<T = unknown>(topic: Topic<T>, id: string): Promise<MessageInfo<T> | null> {
    this.assertOpen('get a message');
    assertTopic(topic);
    assertMessageId(id);
    return this.connection.within('get a message', topic, this.lookup.get<T>(topic, id));
  }

  async list<T = unknown>(
    topic: Topic<T>,
    state: MessageState,
    options?: ListOptions | null,
  ): Promise<MessageInfo<T>[]> {
    this.assertOpen('list messages');
    assertTopic(topic);
    if (!STATES.includes(state)) throw new InvalidOptionError('state', state, `one of ${STATES.join(', ')}`);
    const { offset = 0, limit = 100 } = optionsOf(options);
    assertInteger('offset', offset, 0);
    assertBounded('listPage', limit, 'limit');
    if (state === 'dead') {
      // Dead letters have their own page (oldest first); shown here in the same shape.
      const letters = await this.deadLetters<T>(topic, { offset, limit });
      return letters.map((letter) => deadLetterInfo(letter, this.settings.maxAttempts));
    }
    return this.connection.within('list messages', topic, this.lookup.list<T>(topic, state, offset, limit));
  }

  async cancel(topic: string, id: string): Promise<MessageState | null> {
    this.assertOpen('cancel a message');
    assertTopic(topic);
    assertMessageId(id);
    const state = await this.connection.within('cancel a message', topic, this.lookup.cancel(topic, id));
    if (state) this.events.emit({ type: 'cancelled', topic, id });
    return state;
  }

  /**
   * The ack of a message whose topic keeps completed messages: complete.lua stores its record
   * with `result`. Undefined when the topic keeps none (a plain ack then deletes it).
   * @throws {InvalidStoredValueError} when `result` is not JSON data or is over maxPayloadBytes.
   * @internal
   */
  protected completeAck(message: ReservedMessage, result: unknown): Promise<boolean[]> | undefined {
    const policy = this.settings.keepCompleted(message.topic);
    if (!policy) return undefined;
    const encoded = result === undefined ? undefined : encodeStoredValue(result, policy.maxResultBytes);
    if (encoded && 'problem' in encoded) throw new InvalidStoredValueError('result', message.topic, encoded.problem);
    const { id, token, leaseDeadline } = message;
    return this.engine.complete(message.topic, [
      { id, token, leaseDeadline, extra: completionExtra(encoded?.json, undefined) },
    ]);
  }
}
