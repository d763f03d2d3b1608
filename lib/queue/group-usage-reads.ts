import type { GroupUsage, GroupUsageOptions } from '../interfaces';
import type { QueueCore } from './queue-core';

/** Reads what a topic's groups used (see RedisAckQueueFleetApi): a part of RedisAckQueueService. */
export class GroupUsageReads {
  constructor(private readonly core: QueueCore) {}

  groupUsage(_topic: string, _options?: GroupUsageOptions | null): Promise<GroupUsage> {
    void this.core;
    return Promise.reject(new Error('groupUsage: to be built'));
  }
}
