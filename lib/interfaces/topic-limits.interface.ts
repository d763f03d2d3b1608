import type { KeepCompletedOptions } from './queue-lookup-api.interface';

/**
 * A rate: at most `max` deliveries start in any interval of `perMs` ms (a sliding window: a start
 * is the reserve that leases the message, on the Redis server's clock). The window counted is
 * `perMs + ceil(perMs * 2 / 100)` ms, so handlers that start a little after their reserve keep the
 * limit on their own clocks too (README, "The rate guarantee").
 */
export interface RateLimit {
  /** Deliveries that may start in any interval of `perMs` (1-1,000,000). */
  max: number;
  /** The interval's length in ms (10 to 86,400,000). */
  perMs: number;
}

/**
 * Fleet-wide limits of one topic, kept in Redis so that every consumer, in every process,
 * obeys the same. Messages over a limit are not taken and no attempt is counted; consumers
 * wait for the limit to open (an ack, or the moment a rate allows the next start) without polling.
 */
export interface TopicLimits {
  /**
   * At most this many messages of the topic leased at once across all consumers (1-100,000).
   * On a partitioned topic each partition takes an even share (at least 1: it must be at
   * least the partition count).
   */
  globalConcurrency?: number;
  /** At most `max` deliveries start in any interval of `perMs`, across all consumers (shared out over partitions like globalConcurrency). */
  rateLimit?: RateLimit;
  /** The same per ordered group: a group at its rate is held until its oldest start in the interval leaves it; the others go on. */
  groupRateLimit?: RateLimit;
  /**
   * Messages of one ordered group in flight at once (1-1,000): 1 keeps push order; more where
   * order does not matter but a group must not take over the consumers.
   * @defaultValue `1`
   */
  groupConcurrency?: number;
}

/**
 * Weights of a topic's ordered groups for their fair share of starts (`setGroupWeights`): group
 * name -> a whole number from 1 to 1,000. A group not named weighs 1. With every group
 * backlogged, each starts messages in proportion to its weight (docs/ordered-groups.md, "Weighted fair
 * share", has the exact guarantee). `groupWeights()` answers an object without a prototype.
 */
export type GroupWeights = Readonly<Record<string, number>>;

/**
 * How one topic is laid out in Redis (producers and consumers of the topic must agree), and its
 * fleet-wide limits, written to Redis by this app's consumers of the topic when they start.
 */
export interface TopicOptions extends TopicLimits {
  /**
   * Spread the topic over this many hash slots (1-256), so a busy topic uses every master of
   * a Redis Cluster. Messages go to a partition by a hash of their id. Default 1. Changing it
   * for a topic that still holds messages is refused: drain the topic first.
   * @defaultValue `1`
   */
  partitions?: number;
  /**
   * Keep this topic's acked messages for look-up (see {@link KeepCompletedOptions}): `true`
   * for the defaults, an object to set the bounds, `false` to keep none even when the
   * service's `keepCompleted` is on.
   * @defaultValue the service's `keepCompleted`
   */
  keepCompleted?: boolean | KeepCompletedOptions;
}
