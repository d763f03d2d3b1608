/** Waits growing as base * 2^(attempt-1), capped, with full jitter by default. */
export interface ExponentialBackoff {
  type: 'exponential';
  /** Wait after the first failure (ms). */
  delayMs: number;
  /** Cap of the wait (ms). Default one hour. */
  maxDelayMs?: number;
  /** Random share taken off each wait, 0 to 1. Default 0.5. */
  jitter?: number;
}

/** The same wait after every failure. */
export interface FixedBackoff {
  type: 'fixed';
  delayMs: number;
}

/** A function of the attempt that failed (1 for the first delivery) and its error, giving ms. */
export type BackoffFunction = (attempt: number, error: unknown) => number;

export type BackoffOption = ExponentialBackoff | FixedBackoff | BackoffFunction;
