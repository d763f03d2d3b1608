import type { GroupQuotas } from '../interfaces';
import { assertGroupQuotas } from './group-quota-settings';
import type { QueueCore } from './queue-core';
import { assertTopic } from './validation';

/** The quotas of a topic's ordered groups (see RedisAckQueueFleetApi): a part of RedisAckQueueService. */
export class GroupQuotaControls {
  constructor(private readonly core: QueueCore) {}

  async setGroupQuotas(topic: string, quotas: GroupQuotas | null): Promise<void> {
    await this.core.call('set group quotas', topic, () => {
      assertTopic(topic);
      if (quotas !== null) assertGroupQuotas(quotas);
      return this.core.engine.groupQuotas.set(topic, quotas);
    });
  }

  groupQuotas(topic: string): Promise<GroupQuotas> {
    return this.core.call('read group quotas', topic, () => {
      assertTopic(topic);
      return this.core.engine.groupQuotas.get(topic);
    });
  }
}
