import type { ScalingReport, ScalingTarget } from '../interfaces';
import type { QueueCore } from './queue-core';

/** The scaling signal of topics (see RedisAckQueueFleetApi): a part of RedisAckQueueService. */
export class QueueScaling {
  constructor(private readonly core: QueueCore) {}

  setScalingTarget(_topic: string, _target: ScalingTarget | null): Promise<void> {
    return Promise.reject(new Error('setScalingTarget: to be built'));
  }

  scaling(_topic: string): Promise<ScalingReport | null> {
    void this.core;
    return Promise.reject(new Error('scaling: to be built'));
  }
}
