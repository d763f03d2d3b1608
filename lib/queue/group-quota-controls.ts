import type { GroupQuotas } from '../interfaces';
import type { QueueCore } from './queue-core';

/** The quotas of a topic's ordered groups (see RedisAckQueueFleetApi): a part of RedisAckQueueService. */
export class GroupQuotaControls {
  constructor(private readonly core: QueueCore) {}

  setGroupQuotas(_topic: string, _quotas: GroupQuotas | null): Promise<void> {
    return Promise.reject(new Error('setGroupQuotas: to be built'));
  }

  groupQuotas(_topic: string): Promise<GroupQuotas> {
    void this.core;
    return Promise.reject(new Error('groupQuotas: to be built'));
  }
}
