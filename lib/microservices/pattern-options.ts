import { UnknownPatternOptionError } from '../errors';
import type { QueueHandlerOptions } from '../interfaces';

/** The handler options a pattern decorator's extras may set. */
const HANDLER_OPTIONS = [
  'concurrency',
  'leaseMs',
  'maxAttempts',
  'backoff',
  'batchSize',
  'timeoutMs',
  'maxDeferrals',
  'globalConcurrency',
  'rateLimit',
  'groupRateLimit',
  'groupConcurrency',
] as const satisfies readonly (keyof QueueHandlerOptions)[];

/**
 * The handler options of a pattern decorator's extras (`@EventPattern('x', { maxAttempts: 5 })`).
 * @param topic - The pattern's topic, named by the error.
 * @param extras - The decorator's extras, as Nest gives them.
 * @throws {UnknownPatternOptionError} when the extras hold a key that is no handler option
 *   (a misspelt `maxAttempt` would otherwise be ignored without a word).
 */
export function patternHandlerOptions(topic: string, extras: Record<string, unknown> | undefined): QueueHandlerOptions {
  const options: Record<string, unknown> = {};
  for (const key of Object.keys(extras ?? {})) {
    if (!(HANDLER_OPTIONS as readonly string[]).includes(key)) {
      throw new UnknownPatternOptionError(topic, key, closestOption(key), HANDLER_OPTIONS);
    }
    if (extras?.[key] !== undefined) options[key] = extras[key];
  }
  return options;
}

/** The option a misspelt one most likely meant: one at most two edits away (case aside), if any. */
function closestOption(key: string): string | undefined {
  let best: { option: string; distance: number } | undefined;
  for (const option of HANDLER_OPTIONS) {
    const distance = editDistance(key.toLowerCase(), option.toLowerCase());
    if (distance <= 2 && (!best || distance < best.distance)) best = { option, distance };
  }
  return best?.option;
}

/** Levenshtein distance, on two short option names. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
