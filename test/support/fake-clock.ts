import { join } from 'node:path';

/** The preload that skews a Node process' wall clock (see its header). */
export const SKEW_CLOCK_PRELOAD = join(__dirname, 'skew-clock.js');

/**
 * Environment for a child Node process whose wall clock is `offsetMs` off (negative: behind):
 * Date.now(), new Date() and Date() shifted, monotonic clocks and timers true, as on a host
 * whose clock is wrong. Node only: the preload goes in through NODE_OPTIONS, so any spawn of
 * `node` picks it up and signals reach the Node process itself.
 */
export function skewedClockEnv(offsetMs: number): Record<string, string> {
  const preload = `--require ${JSON.stringify(SKEW_CLOCK_PRELOAD)}`;
  return {
    NODE_OPTIONS: [process.env.NODE_OPTIONS, preload].filter(Boolean).join(' '),
    ACKQ_CLOCK_SKEW_MS: String(offsetMs),
  };
}
