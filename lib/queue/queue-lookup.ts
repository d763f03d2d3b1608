import { DEFAULTS } from '../common/redis-ack-queue.constants';
import { InvalidOptionError } from '../errors';
import type { ListOptions, MessageFilter, MessageInfo, MessageState, Topic } from '../interfaces';
import { filterOf, filters } from './message-filter';
import type { QueueCore } from './queue-core';
import { openInfo, openInfos, openJobValues } from './sealed-lookups';
import {
  assertBounded,
  assertInteger,
  assertMessageId,
  assertOptionalBounded,
  assertTopic,
  optionsOf,
} from './validation';

const STATES: readonly MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children'];

function assertState(state: unknown): asserts state is MessageState {
  if (!STATES.includes(state as MessageState))
    throw new InvalidOptionError('state', state, `one of ${STATES.join(', ')}`);
}

/**
 * Looking messages up, listing them by state and cancelling them (see RedisAckQueueLookupApi):
 * a part of RedisAckQueueService.
 */
export class QueueLookup {
  /**
   * @param localMaxAttempts - The maxAttempts of this service's running consumer of a topic, if
   *   it has one: what applies to the topic's messages without their own, so it is reported for
   *   them rather than the service's default.
   */
  constructor(
    private readonly core: QueueCore,
    private readonly localMaxAttempts: (topic: string) => number | undefined,
  ) {}

  get<T>(topic: Topic<T>, id: string): Promise<MessageInfo<T> | null> {
    return this.core.call('get a message', topic, async () => {
      assertTopic(topic);
      assertMessageId(id);
      const info = await this.core.engine.lookup.get<T>(topic, id, this.maxAttemptsOf(topic));
      // Progress and step results a codec sealed are opened here (see openJobValues), payload, headers and result too.
      if (info) await openJobValues(this.core.codecs, topic, info);
      return info && openInfo(this.core.codecs, topic, info);
    });
  }

  list<T>(topic: Topic<T>, state: MessageState, options?: ListOptions | null): Promise<MessageInfo<T>[]> {
    const { engine } = this.core;
    return this.core.call('list messages', topic, async () => {
      assertTopic(topic);
      assertState(state);
      const { offset = 0, limit = DEFAULTS.pageLimit, preview } = optionsOf(options);
      assertInteger('offset', offset, 0);
      assertBounded('listPage', limit, 'limit');
      assertOptionalBounded('listPreview', preview, 'preview');
      const filter = filterOf(options);
      const maxAttempts = this.maxAttemptsOf(topic);
      const rows = filters(filter)
        ? await engine.filters.list<T>(topic, state, filter, offset, limit, preview, maxAttempts)
        : await engine.lookup.list<T>(topic, state, offset, limit, preview, maxAttempts);
      return openInfos(this.core.codecs, topic, rows);
    });
  }

  count(topic: string, state: MessageState, filter?: MessageFilter | null): Promise<number> {
    return this.core.call('count messages', topic, () => {
      assertTopic(topic);
      assertState(state);
      return this.core.engine.filters.count(topic, state, filterOf(filter));
    });
  }

  /** What applies to the topic's messages without a maxAttempts of their own, as far as this service knows. */
  private maxAttemptsOf(topic: string): number {
    return this.localMaxAttempts(topic) ?? this.core.settings.maxAttempts;
  }

  cancel(topic: string, id: string): Promise<MessageState | null> {
    return this.cancelMessage(topic, id, false);
  }

  /** `ofParent`: a cancelled parent's child, cancelled only while it has not ended (a dead one stays a dead letter). */
  private async cancelMessage(topic: string, id: string, ofParent: boolean): Promise<MessageState | null> {
    const { engine } = this.core;
    const cancelled = await this.core.call('cancel a message', topic, () => {
      assertTopic(topic);
      assertMessageId(id);
      return engine.lookup.cancel(topic, id, ofParent);
    });
    if (!cancelled) return null;
    this.core.events.emit({ type: 'cancelled', topic, id });
    this.core.events.tally.cancelled(topic, 1);
    // A parent: its children that had not ended go too (a child's parent heard it from the engine).
    for (const child of cancelled.children) await this.cancelMessage(child.topic, child.id, true);
    return cancelled.state;
  }
}
