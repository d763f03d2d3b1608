import { TopicPauses } from '../engine/topic-pauses';
import { assertShareable, TopicLimitsStore } from '../engine/topic-limits';
import type { RedisAckQueuePauseApi, TopicLimits } from '../interfaces';
import { assertTopicLimits, pickLimits } from './limit-settings';
import { QueueLookupFacade } from './queue-lookup.facade';
import { assertTopic } from './validation';

/**
 * Pausing, resuming and limiting topics for every consumer (see {@link RedisAckQueuePauseApi}). A layer
 * of {@link RedisAckQueueService}, not used on its own.
 * @internal
 */
export abstract class QueuePauseFacade extends QueueLookupFacade implements RedisAckQueuePauseApi {
  /** @internal */
  protected readonly pauses = new TopicPauses(this.engine.scripts, this.engine.layouts);
  private readonly limitsStore = new TopicLimitsStore(this.engine.scripts, this.engine.layouts);

  pause(topic: string): Promise<void> {
    return this.setPaused('pause', topic, true);
  }

  resume(topic: string): Promise<void> {
    return this.setPaused('resume', topic, false);
  }

  async setLimits(topic: string, limits: TopicLimits | null): Promise<void> {
    this.assertOpen('setLimits');
    assertTopic(topic);
    if (limits !== null) {
      assertTopicLimits(limits);
      assertShareable(limits, this.engine.partitionCount(topic));
    }
    await this.connection.within(
      'setLimits',
      topic,
      this.limitsStore.set(topic, limits && (pickLimits(limits) ?? null)),
    );
  }

  async limits(topic: string): Promise<TopicLimits> {
    this.assertOpen('limits');
    assertTopic(topic);
    return this.connection.within('limits', topic, this.limitsStore.get(topic));
  }

  private async setPaused(operation: string, topic: string, paused: boolean): Promise<void> {
    this.assertOpen(operation);
    assertTopic(topic);
    await this.connection.within(operation, topic, this.pauses.set(topic, paused));
  }
}
