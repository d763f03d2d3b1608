import type { RedisAckQueueTopicsApi } from '../interfaces';
import { QueueScheduleFacade } from './queue-schedule.facade';
import { assertTopic } from './validation';

/**
 * The registry of topics (see {@link RedisAckQueueTopicsApi}). A layer of
 * {@link RedisAckQueueService}, not used on its own; topics are recorded by push, reserve and
 * consume through `topicRegistry`.
 * @internal
 */
export abstract class QueueTopicsFacade extends QueueScheduleFacade implements RedisAckQueueTopicsApi {
  async topics(): Promise<string[]> {
    this.assertOpen('list topics');
    return this.connection.within('list topics', undefined, this.topicRegistry.list());
  }

  async forgetTopic(topic: string): Promise<boolean> {
    this.assertOpen('forget a topic');
    assertTopic(topic);
    return this.connection.within('forget a topic', topic, this.topicRegistry.forget(topic));
  }
}
