import type { ScalingTotals } from '../engine/stores/scaling-store';
import type { ScalingReport, ScalingTarget } from '../interfaces';
import type { QueueCore } from './queue-core';
import { resolveScalingTarget } from './scaling-settings';
import { assertTopic } from './validation';

/** The scaling signal of topics (see RedisAckQueueFleetApi): a part of RedisAckQueueService. */
export class QueueScaling {
  constructor(private readonly core: QueueCore) {}

  async setScalingTarget(topic: string, target: ScalingTarget | null): Promise<void> {
    await this.core.call('set the scaling target', topic, () => {
      assertTopic(topic);
      const stored = target === null ? null : resolveScalingTarget(target);
      return this.core.engine.scaling.set(topic, stored);
    });
  }

  scaling(topic: string): Promise<ScalingReport | null> {
    return this.core.call('read the scaling signal', topic, async () => {
      assertTopic(topic);
      const { engine } = this.core;
      if (!engine.scaling.isPartitioned(topic)) return engine.scaling.read(topic);
      const gauges = await engine.inspector.gauges(topic);
      return engine.scaling.read(topic, { backlog: gauges.ready, pushed: gauges.pushedTotal });
    });
  }

  /**
   * The signal from totals a caller has read already (a metrics scrape's gauges): one script call
   * for any topic, partitioned or not.
   */
  scalingWith(topic: string, totals: ScalingTotals): Promise<ScalingReport | null> {
    return this.core.call('read the scaling signal', topic, () => this.core.engine.scaling.read(topic, totals));
  }
}
