import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { RedisAckQueueService } from '../../service/redis-ack-queue.service';
import { MESSAGES } from '../../common/redis-ack-queue.messages';
import type { RedisAckQueueHealthDetails, RedisAckQueueHealthOptions } from './redis-ack-queue-health.options';

/** A `@nestjs/terminus` HealthIndicatorResult: `{ [key]: { status, ...details } }`. */
export type RedisAckQueueHealthResult<Key extends string = string> = Record<
  Key,
  RedisAckQueueHealthDetails & {
    /** `down` when there is a `reason`, else `up`. */
    status: 'up' | 'down';
  }
>;

/**
 * A health indicator for `@nestjs/terminus`' `HealthCheckService.check([...])`: down, with a
 * `reason`, when Redis does not answer a PING within `pingTimeoutMs`, when a consumer of this
 * process is stalled (no answer from Redis, or a blocked event loop, for `stalledAfterMs`), or
 * when a topic of `maxLagMs` lags more. It returns terminus' result shape and needs no import
 * of terminus; add it to your providers.
 * @example
 * ```ts
 * @Get('health') @HealthCheck()
 * check() {
 *   return this.health.check([() => this.queueHealth.isHealthy('queue', { maxLagMs: { orders: 60_000 } })]);
 * }
 * ```
 */
@Injectable()
export class RedisAckQueueHealthIndicator {
  constructor(private readonly moduleRef: ModuleRef) {}

  /**
   * Checks Redis, this process's consumers and the lag of the topics in `maxLagMs`.
   * @param key - The key of the result (terminus' indicator name).
   * @param options - The bounds; each has a default.
   * @returns `{ [key]: { status, ...details } }`, `down` with a `reason` when a check fails.
   */
  async isHealthy<const Key extends string = 'redis-ack-queue'>(
    key: Key = 'redis-ack-queue' as Key,
    options: RedisAckQueueHealthOptions = {},
  ): Promise<RedisAckQueueHealthResult<Key>> {
    const details = await this.inspect(options);
    const status = details.reason === undefined ? 'up' : 'down';
    return { [key]: { status, ...details } } as RedisAckQueueHealthResult<Key>;
  }

  /** Every reason to be down, joined: a dead Redis also silences the consumers, both are said. */
  private async inspect(options: RedisAckQueueHealthOptions): Promise<RedisAckQueueHealthDetails> {
    const { pingTimeoutMs = 1_000, stalledAfterMs = 30_000, maxLagMs = {} } = options;
    // Found at check time: the queue module need not be global nor imported here.
    const service = this.moduleRef.get(RedisAckQueueService, { strict: false });
    const consumers = service.consumerLiveness();
    const details: RedisAckQueueHealthDetails = { consumers: consumers.length };
    const reasons: string[] = [];
    try {
      details.redisMs = Math.round(await service.ping(pingTimeoutMs));
    } catch (error) {
      reasons.push(MESSAGES.healthRedisDown((error as Error).message));
    }
    for (const { topic, msSinceAnswer, longestTickGapMs } of consumers) {
      if (longestTickGapMs > stalledAfterMs)
        reasons.push(MESSAGES.healthConsumerBlocked(topic, longestTickGapMs, stalledAfterMs));
      if (msSinceAnswer > stalledAfterMs)
        reasons.push(MESSAGES.healthConsumerSilent(topic, msSinceAnswer, stalledAfterMs));
    }
    if (details.redisMs !== undefined && Object.keys(maxLagMs).length > 0) {
      details.lagMs = {};
      for (const [topic, bound] of Object.entries(maxLagMs)) {
        const { oldestReadyAgeMs } = await service.gauges(topic);
        details.lagMs[topic] = Math.max(0, oldestReadyAgeMs);
        if (oldestReadyAgeMs > bound) reasons.push(MESSAGES.healthLag(topic, oldestReadyAgeMs, bound));
      }
    }
    return reasons.length === 0 ? details : { ...details, reason: reasons.join('; ') };
  }
}
