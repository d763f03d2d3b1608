import { LIMITS } from '../common/redis-ack-queue.constants';
import { InvalidOptionError } from '../errors';
import type { GroupQuota, GroupQuotas } from '../interfaces';
import { assertGroup, assertInteger, isPlainObject } from './validation';

/** The ranges of a quota's numbers (inclusive). */
const QUOTA_RANGES = {
  max: [1, 1_000_000],
  perMs: [10, 86_400_000],
  handlerMs: [1, 86_400_000_000],
} as const;

const QUOTAS_KEYS = new Set(['default', 'groups']);
const QUOTA_KEYS = new Set(['max', 'perMs', 'scaleByWeight', 'handlerMs']);

/**
 * Checks setGroupQuotas' argument: a plain object of `default` and `groups` only, each quota a
 * plain object of GroupQuota's fields within their ranges, group names as push checks them, at most
 * LIMITS.groupWeights groups. Errors name the field, never a group (a group may be a tenant's name).
 */
export function assertGroupQuotas(quotas: unknown): asserts quotas is GroupQuotas {
  if (!isPlainObject(quotas) || Object.keys(quotas).some((key) => !QUOTAS_KEYS.has(key))) {
    throw new InvalidOptionError('groupQuotas', quotas, 'a plain object { default?, groups? }, or null');
  }
  if (quotas.default !== undefined) assertGroupQuota('groupQuotas.default', quotas.default);
  if (quotas.groups === undefined) return;
  const { groups } = quotas;
  if (!isPlainObject(groups)) {
    throw new InvalidOptionError('groupQuotas.groups', groups, 'a plain object { [group]: quota }');
  }
  const entries = Object.entries(groups);
  if (entries.length > LIMITS.groupWeights) {
    throw new InvalidOptionError('groupQuotas.groups', entries.length, `at most ${LIMITS.groupWeights} groups`);
  }
  for (const [group, quota] of entries) {
    try {
      assertGroup(group, 0);
    } catch {
      throw new InvalidOptionError('groupQuotas.groups', group, 'group names as push takes them', true);
    }
    assertGroupQuota('groupQuotas.groups[…]', quota);
  }
}

function assertGroupQuota(field: string, quota: unknown): asserts quota is GroupQuota {
  if (!isPlainObject(quota) || Object.keys(quota).some((key) => !QUOTA_KEYS.has(key))) {
    throw new InvalidOptionError(field, quota, 'a plain object { max, perMs, scaleByWeight?, handlerMs? }');
  }
  assertInteger(`${field}.max`, quota.max, ...QUOTA_RANGES.max);
  assertInteger(`${field}.perMs`, quota.perMs, ...QUOTA_RANGES.perMs);
  if (quota.scaleByWeight !== undefined && typeof quota.scaleByWeight !== 'boolean') {
    throw new InvalidOptionError(`${field}.scaleByWeight`, quota.scaleByWeight, 'a boolean');
  }
  if (quota.handlerMs !== undefined) assertInteger(`${field}.handlerMs`, quota.handlerMs, ...QUOTA_RANGES.handlerMs);
}
