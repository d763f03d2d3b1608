/**
 * Waits growing as `delayMs * 2^(attempt-1)`, capped at `maxDelayMs`, with a random share
 * of up to `jitter` taken off each.
 */
export interface ExponentialBackoff {
  /** Selects this kind of backoff. */
  type: 'exponential';
  /** Wait after the first failure (ms, finite, >= 0). */
  delayMs: number;
  /**
   * Cap of the wait (ms, finite, >= 0).
   * @defaultValue `3_600_000` (one hour)
   */
  maxDelayMs?: number;
  /**
   * Random share taken off each wait, 0 to 1 (0: exact waits).
   * @defaultValue `0.5`
   */
  jitter?: number;
}

/** The same wait after every failure. */
export interface FixedBackoff {
  /** Selects this kind of backoff. */
  type: 'fixed';
  /** Wait after every failure (ms, finite, >= 0). */
  delayMs: number;
}

/**
 * A function of the attempt that failed (1 for the first delivery) and its error, giving ms.
 * A result that is not a finite number above 0 means no wait; others are rounded.
 */
export type BackoffFunction = (attempt: number, error: unknown) => number;

/**
 * How long a failed message waits before its next delivery. Checked up front with the
 * options it belongs to (InvalidOptionError, or InvalidQueueHandlerError for a
 * `@QueueHandler`), not at the first failure.
 * @defaultValue `{ type: 'exponential', delayMs: 1_000, maxDelayMs: 3_600_000 }` (jitter 0.5)
 */
export type BackoffOption = ExponentialBackoff | FixedBackoff | BackoffFunction;
