/** Options of {@link RedisAckQueueHealthIndicator.isHealthy}. */
export interface RedisAckQueueHealthOptions {
  /**
   * Redis must answer a PING within this (ms).
   * @defaultValue `1_000`
   */
  pingTimeoutMs?: number;
  /**
   * A consumer is stalled when Redis has not answered it for this long (ms), or its event loop
   * was blocked this long within the last minute. Keep it above 5 s (an idle consumer's wait)
   * and above a third of `leaseMs` (a busy one's heartbeat).
   * @defaultValue `30_000`
   */
  stalledAfterMs?: number;
  /**
   * Lag thresholds: topic -> the most age (ms) its oldest ready message may have.
   * @defaultValue none
   */
  maxLagMs?: Record<string, number>;
}

/** The details a check reports under its key, next to `status`. Never payloads or credentials. */
export interface RedisAckQueueHealthDetails {
  /** Why it is down; absent when up. */
  reason?: string;
  /** PING round trip (ms), when Redis answered. */
  redisMs?: number;
  /** Running consumers in this process. */
  consumers: number;
  /** Oldest ready message age (ms) per topic given in `maxLagMs`, where read. */
  lagMs?: Record<string, number>;
}
