import { InvalidOptionError } from '../errors';
import { HISTORY_MINUTES, MINUTE_MS } from '../engine/codecs/history-format';

/** The longest range worth asking for: the whole history kept (ms). */
export const MAX_SPAN_MS = HISTORY_MINUTES * MINUTE_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** A range of the minutes kept, as `history()` and `groupUsage()` take it. */
export interface TimeRangeOptions {
  from?: number;
  to?: number;
  lastMs?: number;
}

/** A checked range: `lastMs` filled in (one hour unless given). */
export interface TimeRange {
  from?: number;
  to?: number;
  lastMs: number;
}

/**
 * Checks the range fields of a read of the minutes kept (`from` and `to` epoch ms, `from` no later
 * than `to`; `lastMs` from a minute to the whole history, and not beside `from`).
 * @throws {InvalidOptionError} naming the field; nothing is read.
 */
export function checkTimeRange(options: TimeRangeOptions): TimeRange {
  const { from, to, lastMs = HOUR_MS } = options;
  const time = (name: string, value: unknown) => {
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0))
      throw new InvalidOptionError(name, value, 'a time in epoch ms (a whole number, 0 or more)');
  };
  time('from', from);
  time('to', to);
  if (from !== undefined && to !== undefined && from > to)
    throw new InvalidOptionError('from', from, `a time no later than to (${to})`);
  if (typeof lastMs !== 'number' || !Number.isSafeInteger(lastMs) || lastMs < MINUTE_MS || lastMs > MAX_SPAN_MS)
    throw new InvalidOptionError('lastMs', lastMs, `a length in ms from ${MINUTE_MS} to ${MAX_SPAN_MS}`);
  if (from !== undefined && options.lastMs !== undefined)
    throw new InvalidOptionError('lastMs', lastMs, 'left out when from is given (the range is from to to)');
  return { from, to, lastMs };
}
