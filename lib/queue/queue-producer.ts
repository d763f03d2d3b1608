import { InvalidOptionError } from '../errors';
import type { PushManyItem, PushOptions, PushResult, Topic } from '../interfaces';
import { encodePushItem, MessageIds } from './push-items';
import type { QueueCore } from './queue-core';
import { assertTopic, optionsOf } from './validation';

/** Pushing messages (see RedisAckQueueProducerApi): a part of RedisAckQueueService. */
export class QueueProducer {
  private readonly ids = new MessageIds();

  constructor(private readonly core: QueueCore) {}

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
        const encoded = items.map((item) => encodePushItem(topic, item, settings.maxPayloadBytes, this.ids));
        // Nothing to push writes nothing: not even the topic's registration.
        if (encoded.length === 0) return { encoded, flags: [] };
        // The first push of this service to the topic registers it first (see TopicRegistry).
        const noted = engine.topics.note(topic);
        const flags = await (noted ? noted.then(() => engine.push(topic, encoded)) : engine.push(topic, encoded));
        return { encoded, flags };
      },
      settings.replicatedPushes?.timeoutMs,
    );
    return stored.encoded.map(({ id }, i) => {
      if (stored.flags[i]) events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: !stored.flags[i] };
    });
  }

  async checkTopic(topic: string): Promise<void> {
    await this.core.call('check a topic', topic, () => {
      assertTopic(topic);
      return this.core.engine.checkTopic(topic);
    });
  }
}
