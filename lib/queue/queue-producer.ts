import { InvalidOptionError } from '../errors';
import type { PushManyItem, PushOptions, PushResult, Topic } from '../interfaces';
import { MessageIds } from './message-ids';
import { encodePushItem } from './push-items';
import type { QueueCore } from './queue-core';
import { assertTopic, optionsOf } from './validation';

/** Pushing messages (see RedisAckQueueProducerApi): a part of RedisAckQueueService. */
export class QueueProducer {
  private readonly ids: MessageIds;

  constructor(private readonly core: QueueCore) {
    this.ids = new MessageIds(() => core.engine.issueIdPrefix());
  }

  async push<T>(topic: Topic<T>, payload: T, options?: PushOptions | null): Promise<PushResult> {
    const [result] = await this.pushMany(topic, [{ ...optionsOf(options), payload }]);
    return result;
  }

  pushMany<T>(topic: Topic<T>, items: PushManyItem<T>[]): Promise<PushResult[]> {
    const { tracing } = this.core;
    return tracing ? tracing.push(topic, items, (traced) => this.store(topic, traced)) : this.store(topic, items);
  }

  private async store(topic: string, items: PushManyItem[]): Promise<PushResult[]> {
    const { engine, settings, events } = this.core;
    const stored = await this.core.call(
      'push',
      topic,
      async () => {
        assertTopic(topic);
        if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
        const { compact } = engine.format;
        const encoded = items.map((item) => encodePushItem(topic, item, settings.maxPayloadBytes, compact));
        // Nothing to push writes nothing: not even the topic's registration.
        if (encoded.length === 0) return { encoded, flags: [] };
        await this.assignIds(encoded);
        // The first push of this service to the topic registers it first (see TopicRegistry).
        const noted = engine.topics.note(topic);
        const flags = await (noted ? noted.then(() => engine.push(topic, encoded)) : engine.push(topic, encoded));
        return { encoded, flags };
      },
      settings.replicatedPushes?.timeoutMs,
    );
    let count = 0;
    const results = stored.encoded.map(({ id }, i) => {
      if (!stored.flags[i]) return { id, duplicate: true };
      count += 1;
      events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: false };
    });
    events.tally.pushed(topic, count);
    return results;
  }

  /** Gives each item without an id ('') a new one. */
  async assignIds(items: { id: string }[]): Promise<void> {
    // This service's first push asks Redis for the number its ids start with.
    const idsReady = this.ids.ready();
    if (idsReady) await idsReady;
    for (const item of items) if (item.id === '') item.id = this.ids.next();
  }

  /** Redis lost this prefix's data: the next ids start from a number issued again. */
  renewIds(): void {
    this.ids.renew();
  }

  async checkTopic(topic: string): Promise<void> {
    await this.core.call('check a topic', topic, () => {
      assertTopic(topic);
      return this.core.engine.checkTopic(topic);
    });
  }
}
