import { assertShareable } from '../engine/stores/topic-limits';
import type { GroupWeights, TopicLimits } from '../interfaces';
import { assertGroupWeights } from './group-weight-settings';
import { assertLimitsArgument, pickLimits } from './limit-settings';
import type { QueueCore } from './queue-core';
import { assertTopic } from './validation';

/**
 * Pausing, resuming, limiting and weighing the groups of a topic for every consumer (see
 * RedisAckQueuePauseApi): a part of RedisAckQueueService.
 */
export class TopicControls {
  constructor(private readonly core: QueueCore) {}

  pause(topic: string): Promise<void> {
    return this.setPaused('pause', topic, true);
  }

  resume(topic: string): Promise<void> {
    return this.setPaused('resume', topic, false);
  }

  async setLimits(topic: string, limits: TopicLimits | null): Promise<void> {
    const { engine } = this.core;
    await this.core.call('set limits', topic, () => {
      assertTopic(topic);
      if (limits !== null) {
        assertLimitsArgument(limits);
        assertShareable(limits, engine.partitionCount(topic));
      }
      return engine.limits.set(topic, limits && (pickLimits(limits) ?? null), 'hand');
    });
  }

  limits(topic: string): Promise<TopicLimits> {
    return this.core.call('read limits', topic, () => {
      assertTopic(topic);
      return this.core.engine.limits.get(topic);
    });
  }

  async setGroupWeights(topic: string, weights: GroupWeights | null): Promise<void> {
    await this.core.call('set group weights', topic, () => {
      assertTopic(topic);
      if (weights !== null) assertGroupWeights(weights);
      return this.core.engine.groupWeights.set(topic, weights);
    });
  }

  groupWeights(topic: string): Promise<GroupWeights> {
    return this.core.call('read group weights', topic, () => {
      assertTopic(topic);
      return this.core.engine.groupWeights.get(topic);
    });
  }

  private async setPaused(operation: string, topic: string, paused: boolean): Promise<void> {
    await this.core.call(operation, topic, () => {
      assertTopic(topic);
      return this.core.engine.pauses.set(topic, paused);
    });
  }
}
