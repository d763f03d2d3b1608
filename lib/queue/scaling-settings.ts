import { InvalidOptionError } from '../errors';
import type { StoredScalingTarget } from '../engine/stores/scaling-store';
import { assertInteger, isPlainObject } from './validation';

/** The fields of a ScalingTarget: inclusive range and default (undefined: required). */
const FIELDS = {
  targetWaitMs: [1, 86_400_000, undefined],
  minConsumers: [0, 10_000, 0],
  maxConsumers: [1, 10_000, 1_000],
  concurrency: [1, 10_000, 1],
  cooldownMs: [0, 3_600_000, 30_000],
} as const satisfies Record<keyof StoredScalingTarget, readonly [number, number, number | undefined]>;

/**
 * Checks setScalingTarget's argument (a plain object of ScalingTarget's fields, each a whole
 * number within its range, `minConsumers` at most `maxConsumers`) and fills in the defaults.
 * @throws {InvalidOptionError} naming the first field that is wrong; nothing is written.
 */
export function resolveScalingTarget(target: unknown): StoredScalingTarget {
  if (!isPlainObject(target)) {
    throw new InvalidOptionError('scalingTarget', target, 'a plain object { targetWaitMs, ... }, or null');
  }
  for (const field of Object.keys(target)) {
    if (!Object.hasOwn(FIELDS, field)) {
      throw new InvalidOptionError('scalingTarget', undefined, `only the fields ${Object.keys(FIELDS).join(', ')}`);
    }
  }
  const resolved = {} as StoredScalingTarget;
  const entries = Object.entries(FIELDS) as [keyof StoredScalingTarget, readonly [number, number, number?]][];
  for (const [field, [min, max, fallback]] of entries) {
    const value = target[field] === undefined ? fallback : target[field];
    assertInteger(`scalingTarget.${field}`, value, min, max);
    resolved[field] = value as number;
  }
  if (resolved.minConsumers > resolved.maxConsumers) {
    throw new InvalidOptionError('scalingTarget.minConsumers', resolved.minConsumers, 'at most maxConsumers');
  }
  return resolved;
}
