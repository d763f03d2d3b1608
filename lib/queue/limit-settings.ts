import { InvalidOptionError } from '../errors';
import type { RateLimit, TopicLimits } from '../interfaces';
import { assertBounded, assertOptionalBounded, isPlainObject } from './validation';

/** The options of TopicLimits, the only keys setLimits takes. */
const LIMIT_KEYS: readonly string[] = ['globalConcurrency', 'rateLimit', 'groupRateLimit', 'groupConcurrency'];

/** The limit options of a topic, handler or consume() call, if any is set. */
export function pickLimits(options: TopicLimits | undefined): TopicLimits | undefined {
  if (!options) return undefined;
  const { globalConcurrency, rateLimit, groupRateLimit, groupConcurrency } = options;
  const limits: TopicLimits = { globalConcurrency, rateLimit, groupRateLimit, groupConcurrency };
  const set = Object.entries(limits).filter(([, value]) => value !== undefined);
  return set.length > 0 ? Object.fromEntries(set) : undefined;
}

/** Checks limits; throws a typed error on the first bad one (`prefix` names where they were given). */
export function assertTopicLimits(limits: unknown, prefix = ''): asserts limits is TopicLimits {
  if (typeof limits !== 'object' || limits === null) {
    throw new InvalidOptionError(`${prefix}limits`, limits, 'an object { globalConcurrency?, rateLimit?, ... }');
  }
  const { globalConcurrency, rateLimit, groupRateLimit, groupConcurrency } = limits as TopicLimits;
  assertOptionalBounded('globalConcurrency', globalConcurrency, `${prefix}globalConcurrency`);
  assertOptionalBounded('groupConcurrency', groupConcurrency, `${prefix}groupConcurrency`);
  assertRate(rateLimit, `${prefix}rateLimit`);
  assertRate(groupRateLimit, `${prefix}groupRateLimit`);
}

/**
 * Checks setLimits' argument: limits alone, in a plain object. An array, a Date, a class
 * instance or a misspelt key would otherwise read as "no limits" and delete them.
 */
export function assertLimitsArgument(limits: unknown): asserts limits is TopicLimits {
  if (!isPlainObject(limits)) {
    throw new InvalidOptionError('limits', limits, 'a plain object { globalConcurrency?, rateLimit?, ... }, or null');
  }
  const unknown = Object.keys(limits).find((key) => !LIMIT_KEYS.includes(key));
  if (unknown !== undefined) {
    throw new InvalidOptionError(`limits.${unknown}`, limits[unknown], `one of ${LIMIT_KEYS.join(', ')}`);
  }
  assertTopicLimits(limits);
}

function assertRate(rate: RateLimit | undefined, label: string): void {
  if (rate === undefined) return;
  if (!isPlainObject(rate) || Object.keys(rate).some((key) => key !== 'max' && key !== 'perMs')) {
    throw new InvalidOptionError(label, rate, 'a plain object { max, perMs }');
  }
  assertBounded('rateMax', rate.max, `${label}.max`);
  assertBounded('ratePerMs', rate.perMs, `${label}.perMs`);
}
