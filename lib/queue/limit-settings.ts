import { InvalidOptionError } from '../errors';
import type { RateLimit, TopicLimits } from '../interfaces';
import { assertBounded, assertOptionalBounded } from './validation';

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

function assertRate(rate: RateLimit | undefined, label: string): void {
  if (rate === undefined) return;
  if (typeof rate !== 'object' || rate === null) {
    throw new InvalidOptionError(label, rate, 'an object { max, perMs }');
  }
  assertBounded('rateMax', rate.max, `${label}.max`);
  assertBounded('ratePerMs', rate.perMs, `${label}.perMs`);
}
