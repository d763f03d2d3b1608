import { LIMITS } from '../common/redis-ack-queue.constants';
import { InvalidOptionError } from '../errors';
import type { GroupWeights } from '../interfaces';
import { assertBounded, assertGroup, isPlainObject } from './validation';

/**
 * Checks setGroupWeights' argument: a plain object of group names (as push checks a group) to
 * whole numbers from 1 to 1,000, at most LIMITS.groupWeights of them. A bad weight's error names
 * no group (a group may be a tenant's name).
 */
export function assertGroupWeights(weights: unknown): asserts weights is GroupWeights {
  if (!isPlainObject(weights)) {
    throw new InvalidOptionError('groupWeights', weights, 'a plain object { [group]: weight }, or null');
  }
  const entries = Object.entries(weights);
  if (entries.length > LIMITS.groupWeights) {
    throw new InvalidOptionError('groupWeights', entries.length, `at most ${LIMITS.groupWeights} groups`);
  }
  for (const [group, weight] of entries) {
    assertGroup(group, 0);
    assertBounded('groupWeight', weight);
  }
}
