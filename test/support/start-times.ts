/**
 * Delivery start times as rate limits see them: a start's time on the Redis server's clock is
 * its message's `enqueuedAt` plus the `waitMs` of its `acked` event (first deliveries), exactly
 * the reserve that started it; a handler's own `Date.now()` comes later by the reply's trip and
 * the event loop's delay, which differ from start to start.
 */

/** A message as its handler saw it start: `Date.now()` and the message's `enqueuedAt`. */
export interface HandlerStart {
  at: number;
  enqueuedAt: number;
}

/**
 * The most starts in any half-open interval [t, t + perMs): two starts share one iff they are
 * less than perMs apart.
 */
export function maxStartsInAnyInterval(times: readonly number[], perMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while (sorted[last] - sorted[first] >= perMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * The least time `count` starts can span under `max` per `perMs`: whole intervals between
 * the first start of each burst of max.
 */
export function leastSpanMs(count: number, max: number, perMs: number): number {
  return Math.floor((count - 1) / max) * perMs;
}

/**
 * The dispatch allowance of a rate window (rate_span in lib/engine/scripts/lua/prelude-limits.lua): a
 * window's starts begin perMs + this after the previous window's first, so handlers that start up
 * to this much later than their reserve still see at most max in any perMs.
 */
export function dispatchAllowanceMs(perMs: number): number {
  return Math.ceil((perMs * 2) / 100);
}

/** Each handler's start less its reserve's (same machine, one clock): the least, the median, the 99th percentile, the most. */
export function dispatchDelays(handler: readonly number[], server: readonly number[]): Record<string, number> {
  const delays = handler.map((at, i) => at - server[i]).sort((a, b) => a - b);
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))];
  return { min: delays[0], p50: at(0.5), p99: at(0.99), max: delays[delays.length - 1] };
}
