import type { QueueCore } from './queue-core';
import { assertTopic } from './validation';

/**
 * The registry of topics (see RedisAckQueueTopicsApi): a part of RedisAckQueueService. Push,
 * reserve and consume record their topics in it through the engine.
 */
export class QueueTopics {
  constructor(private readonly core: QueueCore) {}

  topics(): Promise<string[]> {
    return this.core.call('list topics', undefined, () => this.core.engine.topics.list());
  }

  forgetTopic(topic: string): Promise<boolean> {
    return this.core.call('forget a topic', topic, () => {
      assertTopic(topic);
      return this.core.engine.topics.forget(topic);
    });
  }
}
