import { deadLetterInfo } from '../engine/lookup-format';
import { InvalidOptionError } from '../errors';
import type { ListOptions, MessageInfo, MessageState, Topic } from '../interfaces';
import type { QueueCore } from './queue-core';
import {
  assertBounded,
  assertInteger,
  assertMessageId,
  assertOptionalBounded,
  assertTopic,
  optionsOf,
} from './validation';

const STATES: readonly MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed'];

/**
 * Looking messages up, listing them by state and cancelling them (see RedisAckQueueLookupApi):
 * a part of RedisAckQueueService.
 */
export class QueueLookup {
  constructor(private readonly core: QueueCore) {}

  get<T>(topic: Topic<T>, id: string): Promise<MessageInfo<T> | null> {
    return this.core.call('get a message', topic, () => {
      assertTopic(topic);
      assertMessageId(id);
      return this.core.engine.lookup.get<T>(topic, id);
    });
  }

  list<T>(topic: Topic<T>, state: MessageState, options?: ListOptions | null): Promise<MessageInfo<T>[]> {
    const { engine, settings } = this.core;
    return this.core.call('list messages', topic, async () => {
      assertTopic(topic);
      if (!STATES.includes(state)) throw new InvalidOptionError('state', state, `one of ${STATES.join(', ')}`);
      const { offset = 0, limit = 100, preview } = optionsOf(options);
      assertInteger('offset', offset, 0);
      assertBounded('listPage', limit, 'limit');
      assertOptionalBounded('listPreview', preview, 'preview');
      if (state !== 'dead') return engine.lookup.list<T>(topic, state, offset, limit, preview);
      // Dead letters have their own page (oldest first); shown here in the same shape.
      const letters = await engine.inspector.deadLetters<T>(topic, offset, limit, preview);
      return letters.map((letter) => deadLetterInfo(letter, settings.maxAttempts));
    });
  }

  async cancel(topic: string, id: string): Promise<MessageState | null> {
    const state = await this.core.call('cancel a message', topic, () => {
      assertTopic(topic);
      assertMessageId(id);
      return this.core.engine.lookup.cancel(topic, id);
    });
    if (state) this.core.events.emit({ type: 'cancelled', topic, id });
    return state;
  }
}
