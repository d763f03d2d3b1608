import { TopicPauses } from '../engine/topic-pauses';
import type { RedisAckQueuePauseApi } from '../interfaces';
import { QueueLookupFacade } from './queue-lookup.facade';
import { assertTopic } from './validation';

/**
 * Pausing and resuming topics for every consumer (see {@link RedisAckQueuePauseApi}). A layer
 * of {@link RedisAckQueueService}, not used on its own.
 * @internal
 */
export abstract class QueuePauseFacade extends QueueLookupFacade implements RedisAckQueuePauseApi {
  /** @internal */
  protected readonly pauses = new TopicPauses(this.engine.scripts, this.engine.layouts);

  pause(topic: string): Promise<void> {
    return this.setPaused('pause', topic, true);
  }

  resume(topic: string): Promise<void> {
    return this.setPaused('resume', topic, false);
  }

  private async setPaused(operation: string, topic: string, paused: boolean): Promise<void> {
    this.assertOpen(operation);
    assertTopic(topic);
    await this.connection.within(operation, topic, this.pauses.set(topic, paused));
  }
}
