import type fc from 'fast-check';

/**
 * The `replayPath` a failed command sequence prints (its replayPath comment): with MODEL_SEED and
 * MODEL_PATH, fast-check needs it to replay which commands ran (their `check` decided it).
 */
export function commandsReplayPath(): { replayPath?: string } {
  return process.env.MODEL_REPLAY_PATH ? { replayPath: process.env.MODEL_REPLAY_PATH } : {};
}

/**
 * The seed of `npm test`'s runs: fixed, so a CI run fails only on what the last change broke (as
 * Hypothesis derandomizes its CI profile); hunts for what no change broke take a new seed each.
 */
const CI_SEED = 20261129;

/**
 * How many runs a property makes, and from which seed: a cheap default for CI (its fixed seed),
 * `MODEL_RUNS` for a longer hunt (a new seed each time, or `MODEL_SEED=random` for the default
 * count), `MODEL_SEED` (with `MODEL_PATH`, both printed by fast-check on a failure) to replay one.
 */
export function runSettings<T>(defaultRuns: number): fc.Parameters<T> {
  const { MODEL_RUNS, MODEL_SEED, MODEL_PATH } = process.env;
  const seed = MODEL_SEED === 'random' ? undefined : MODEL_SEED ? Number(MODEL_SEED) : MODEL_RUNS ? undefined : CI_SEED;
  return {
    numRuns: MODEL_RUNS ? Number(MODEL_RUNS) : defaultRuns,
    ...(seed === undefined ? {} : { seed }),
    ...(MODEL_PATH ? { path: MODEL_PATH } : {}),
  };
}

/** Jest's bound for a property: a second a run (no run takes near that), so a longer MODEL_RUNS hunt is not cut short. */
export function propertyTimeoutMs(defaultRuns: number): number {
  const runs = process.env.MODEL_RUNS ? Number(process.env.MODEL_RUNS) : defaultRuns;
  return Math.max(60_000, runs * 1000);
}
