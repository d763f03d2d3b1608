import { DEFAULTS } from '../common/redis-ack-queue.constants';
import type { DeadSweep } from '../engine/stores/queue-inspector';
import type { DeadLetter, QueueGauges, QueueStats, Topic } from '../interfaces';
import type { QueueCore } from './queue-core';
import { openDeadLetters } from './sealed-lookups';
import { assertBounded, assertIdList, assertInteger, assertTopic, optionsOf } from './validation';

/**
 * Counting a topic's messages and handling its dead letters (see RedisAckQueueProducerApi):
 * a part of RedisAckQueueService.
 */
export class QueueInspection {
  constructor(private readonly core: QueueCore) {}

  stats(topic: string): Promise<QueueStats> {
    return this.core.call('read stats', topic, () => {
      assertTopic(topic);
      return this.core.engine.inspector.stats(topic);
    });
  }

  gauges(topic: string): Promise<QueueGauges> {
    return this.core.call('read gauges', topic, () => {
      assertTopic(topic);
      return this.core.engine.inspector.gauges(topic);
    });
  }

  deadLetters<T>(topic: Topic<T>, options?: { offset?: number; limit?: number } | null): Promise<DeadLetter<T>[]> {
    return this.core.call('read dead letters', topic, async () => {
      assertTopic(topic);
      const { offset = 0, limit = DEFAULTS.pageLimit } = optionsOf(options);
      assertInteger('offset', offset, 0);
      assertBounded('deadLetterPage', limit, 'limit');
      return openDeadLetters(this.core.codecs, await this.core.engine.inspector.deadLetters<T>(topic, offset, limit));
    });
  }

  requeueDead(topic: string, ids?: string[] | null): Promise<number> {
    return this.sweepDead('deadRequeue', 'requeue dead letters', topic, ids);
  }

  purgeDead(topic: string, ids?: string[] | null): Promise<number> {
    return this.sweepDead('deadPurge', 'purge dead letters', topic, ids);
  }

  private sweepDead(sweep: DeadSweep, operation: string, topic: string, ids: string[] | undefined | null) {
    return this.core.call(operation, topic, () => {
      assertTopic(topic);
      if (ids !== undefined && ids !== null) assertIdList(ids);
      return this.core.engine.inspector.sweepDead(sweep, topic, ids ?? undefined);
    });
  }
}
