import { InvalidOptionError } from '../errors';
import type { BackoffOption } from '../interfaces';

/** Turns a backoff option into a function of (attempt, error) giving a wait in ms. */
export function resolveBackoff(option: BackoffOption): (attempt: number, error: unknown) => number {
  if (typeof option === 'function') {
    return (attempt, error) => {
      const ms = option(attempt, error);
      return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0;
    };
  }
  if (option.type === 'fixed') return () => option.delayMs;
  const { delayMs, maxDelayMs = 3_600_000, jitter = 0.5 } = option;
  return (attempt) => {
    const full = Math.min(maxDelayMs, delayMs * 2 ** Math.min(attempt - 1, 52));
    return Math.round(full * (1 - jitter * Math.random()));
  };
}

/** Checks a backoff option up front, so a bad one fails at configuration, not at the first failure. */
export function assertBackoff(option: unknown): asserts option is BackoffOption {
  if (typeof option === 'function') return;
  const o = option as Record<string, unknown> | null;
  const valid =
    typeof o === 'object' &&
    o !== null &&
    (o.type === 'fixed' || o.type === 'exponential') &&
    isMs(o.delayMs) &&
    (o.maxDelayMs === undefined || isMs(o.maxDelayMs)) &&
    (o.jitter === undefined || (typeof o.jitter === 'number' && o.jitter >= 0 && o.jitter <= 1));
  if (!valid) {
    throw new InvalidOptionError(
      'backoff',
      option,
      "{ type: 'exponential' | 'fixed', delayMs >= 0, maxDelayMs?, jitter? 0-1 } or a function",
    );
  }
}

function isMs(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
