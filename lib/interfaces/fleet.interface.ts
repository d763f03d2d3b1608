/**
 * What `setScalingTarget` asks of a topic: how long a message may wait before a handler starts it,
 * and the bounds of the consumer count the signal answers (docs/scaling.md).
 */
export interface ScalingTarget {
  /**
   * The wait a message should not exceed, from due to its start (ms, 1 to 86,400,000): the signal
   * asks for the fewest consumers whose expected wait at the measured arrival rate and handling
   * time stays within it, and that clear the backlog within it.
   */
  targetWaitMs: number;
  /**
   * The least the signal answers (0-10,000; 0 lets an autoscaler scale to zero when nothing waits).
   * @defaultValue `0`
   */
  minConsumers?: number;
  /**
   * The most the signal answers (1-10,000, at least `minConsumers`).
   * @defaultValue `1000`
   */
  maxConsumers?: number;
  /**
   * Handler slots each consumer runs at once (its `concurrency`, 1-10,000): the signal counts
   * consumers, each taking this many messages at a time.
   * @defaultValue `1`
   */
  concurrency?: number;
  /**
   * How long the computed count must stay lower (by more than 10 %) before the signal comes down
   * to it (ms, 0-3,600,000): it goes up at once, down only after this, so it does not flap.
   * @defaultValue `30000`
   */
  cooldownMs?: number;
}

/** The scaling signal of one topic, as `queue.scaling()` reads it (docs/scaling.md). */
export interface ScalingReport {
  /** The topic read. */
  topic: string;
  /** The consumers the topic needs now, smoothed (between `minConsumers` and `maxConsumers`). */
  desiredConsumers: number;
  /** The count computed from this read alone, before the cooldown smooths it. */
  computedConsumers: number;
  /**
   * Messages pushed per second, since the newest earlier read at least 10 s old (with a scrape every
   * 15 s: the last 15 s), or over the history's current and previous minutes on a first read.
   */
  arrivalPerSecond: number;
  /**
   * Mean handler time per message over the current and previous minutes (ms); with none ended
   * there, the last one measured; 0 when none was ever measured.
   */
  handlingMs: number;
  /** Messages ready to start now (not delayed, not running). */
  backlog: number;
  /** The target wait set (ms). */
  targetWaitMs: number;
  /** The target's `minConsumers` (its default filled in). */
  minConsumers: number;
  /** The target's `maxConsumers` (its default filled in). */
  maxConsumers: number;
  /** The target's `concurrency`: handler slots per consumer (its default filled in). */
  concurrency: number;
  /** The target's `cooldownMs` (its default filled in). */
  cooldownMs: number;
  /** When it was read (epoch ms, the Redis server's clock). */
  at: number;
}

/**
 * A group's quota (`setGroupQuotas`): at most `max` starts in any interval of `perMs` ms, across
 * every process (the sliding window of `groupRateLimit`), and optionally at most `handlerMs` of
 * handler time in any such interval (docs/group-quotas.md).
 */
export interface GroupQuota {
  /** Starts allowed in any interval of `perMs` (1-1,000,000), times the group's weight when `scaleByWeight`. */
  max: number;
  /** The interval's length in ms (10 to 86,400,000). */
  perMs: number;
  /**
   * Multiply `max` (and `handlerMs`) by the group's weight (`setGroupWeights`; 1 when not named),
   * so a plan's weight sets both its share and its cap.
   * @defaultValue `false`
   */
  scaleByWeight?: boolean;
  /**
   * Handler time the group may use in any interval of `perMs` (ms, 1 to 86,400,000,000): a group
   * whose deliveries ran this long in the interval starts nothing more until some leave it.
   */
  handlerMs?: number;
}

/**
 * The quotas of a topic's ordered groups: `default` for every group not named in `groups`. A group
 * named with a quota of its own has that one only. `groupQuotas()` answers the same shape, its
 * `groups` an object without a prototype.
 */
export interface GroupQuotas {
  /** The quota of every group not named in `groups`. */
  default?: GroupQuota;
  /** Group name (as `push` takes it) -> its own quota; at most 10,000 groups. */
  groups?: Readonly<Record<string, GroupQuota>>;
}

/** What `queue.groupUsage()` reads: a range of whole minutes and how many groups. */
export interface GroupUsageOptions {
  /** Start of the range (epoch ms, server clock). Default: `lastMs` before `to`. */
  from?: number;
  /** End of the range (epoch ms, the minute it falls in included). Default: now. */
  to?: number;
  /** Without `from`: the range's length (ms, 1 minute to 25 hours). Default one hour. */
  lastMs?: number;
  /** The groups answered, those with the most handler time in the range first (1-1,000). Default 10. */
  top?: number;
}

/** What one group (or one minute of it) used: counts of deliveries, and their handler time. */
export interface GroupUsageCounts {
  /** Deliveries that ended in an ack. */
  handled: number;
  /**
   * Deliveries that failed (a throw, a rejection, a body its codec could not open): `retried` +
   * `dead`. A delivery whose lease was lost is not counted (its next one is): docs/group-usage.md.
   */
  failed: number;
  /** Failed deliveries that will run again after their backoff. */
  retried: number;
  /**
   * Deliveries of the group that ended in the dead letters (not the messages a reserve sent there:
   * last lease run out, deadline passed, unreadable body).
   */
  dead: number;
  /** Handler run time of the group's ended deliveries (whole ms; none for deliveries by hand). */
  handlerMs: number;
}

/** One minute of a group's usage. */
export interface GroupUsageMinute extends GroupUsageCounts {
  /** Start of the minute (epoch ms, server clock). */
  at: number;
}

/** One group's usage over the range: its totals and the minutes in which it used anything. */
export interface GroupUsageRow extends GroupUsageCounts {
  /** The group's name. */
  group: string;
  /** Its minutes that counted anything, oldest first. */
  minutes: GroupUsageMinute[];
}

/** What `queue.groupUsage()` answers: the top groups by handler time over a range of minutes. */
export interface GroupUsage {
  /** The topic read. */
  topic: string;
  /** Start of the first minute (epoch ms). */
  from: number;
  /** End of the last minute (epoch ms, exclusive). */
  to: number;
  /** How many groups used anything in the range (the top ones are in `groups`). */
  groupCount: number;
  /** The top groups, most handler time first (ties by name). */
  groups: GroupUsageRow[];
}
