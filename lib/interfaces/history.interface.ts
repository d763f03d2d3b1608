/**
 * What `queue.history()` reads: a time range, from whole minutes kept in Redis for 25 hours.
 * Times are epoch ms on the Redis server's clock; `from` and `to` are rounded down to a
 * multiple of `stepMs`.
 */
export interface TopicHistoryOptions {
  /** Start of the range (epoch ms). Default: `lastMs` before the end of `to`'s step. */
  from?: number;
  /**
   * Without `from`: how long the range is, ending with `to`'s step (ms, 1 minute to 25 hours),
   * so `lastMs / stepMs` points (rounded up). Measured on the server's clock, so "the last 24
   * hours" needs no clock of the caller's. Default one hour.
   */
  lastMs?: number;
  /** End of the range (epoch ms, its step included). Default: now, on the server's clock. */
  to?: number;
  /** Width of one point, a whole number of minutes (ms). Default 60 000. */
  stepMs?: number;
}

/**
 * Percentiles of the times recorded in one step, read from a histogram whose buckets are
 * 2^(1/4) apart (each value within 10 % of what was measured); undefined where nothing was
 * recorded. Ms.
 */
export interface HistoryTimes {
  /** How many times were recorded. */
  count: number;
  /** The median (ms). */
  p50?: number;
  /** The 95th percentile (ms). */
  p95?: number;
  /** The 99th percentile (ms). */
  p99?: number;
  /** Their mean (ms). */
  mean?: number;
}

/** One step of a topic's history: counts of what happened in it, and the times recorded in it. */
export interface TopicHistoryPoint {
  /** Start of the step (epoch ms, server clock). */
  at: number;
  /** Messages stored (not duplicates), by push, pushMany, schedules and re-pushes. */
  pushed: number;
  /** Deliveries that ended in an ack. */
  acked: number;
  /** Failed deliveries that will be delivered again after their backoff. */
  retried: number;
  /** Messages moved to the dead letters (failed, rejected or malformed). */
  dead: number;
  /** Messages removed by `cancel()`. */
  cancelled: number;
  /**
   * Messages whose start-by deadline passed before they started (docs/deadlines.md): those that
   * became dead letters are counted in `dead` too; dropped ones only here.
   */
  expired: number;
  /** From due (the push, or a retry's due time) to the reserve that leased it. */
  wait: HistoryTimes;
  /** Handler run time of settled deliveries (acked, retried, dead). */
  handling: HistoryTimes;
}

/** A topic's history over a range, one point per step, oldest first (steps with nothing are zeros). */
export interface TopicHistory {
  /** The topic read. */
  topic: string;
  /** Start of the first step (epoch ms). */
  from: number;
  /** End of the last step (epoch ms, exclusive). */
  to: number;
  /** Width of each point (ms). */
  stepMs: number;
  /** One per step from `from`, oldest first. */
  points: TopicHistoryPoint[];
}
