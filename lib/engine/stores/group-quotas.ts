import { userKeyed } from '../../common/user-keyed';
import type { GroupQuota, GroupQuotas } from '../../interfaces';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/**
 * The field of the default quota in the `groupQuotas` HASH ('q<group>' a group's: a group name is
 * never empty). The groups' state is kept beside them under other prefixes (prelude-quotas.lua).
 */
const DEFAULT_FIELD = 'q';

/**
 * The quotas of a topic's ordered groups, kept in each partition's `groupQuotas` HASH (a group
 * lives in one partition, which holds its starts and handler time: prelude-quotas.lua).
 */
export class GroupQuotasStore {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Replaces the quotas of every partition (null or {}: none, and the topic pays nothing for them). */
  async set(topic: string, quotas: GroupQuotas | null): Promise<void> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'set group quotas');
    const pairs: string[] = [];
    if (quotas?.default) pairs.push(DEFAULT_FIELD, encodeQuota(quotas.default));
    for (const [group, quota] of Object.entries(quotas?.groups ?? {})) pairs.push(`q${group}`, encodeQuota(quota));
    const longest = Math.max(0, ...quotaList(quotas).map((quota) => quota.perMs));
    // The longest window kept: perMs plus its dispatch allowance (prelude-limits.lua, rate_span).
    const args = [String(longest + Math.ceil((longest * 2) / 100)), ...pairs];
    await Promise.all(layout.partitions.map((keys) => this.scripts.run('groupQuotasSet', topic, keys, args)));
  }

  /** The quotas set for a topic ({} when none), `groups` an object without a prototype. */
  async get(topic: string): Promise<GroupQuotas> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'read group quotas');
    const pairs = await this.scripts.run<string[]>('groupQuotasGet', topic, layout.partitions[0], []);
    const quotas: { default?: GroupQuota; groups?: Record<string, GroupQuota> } = {};
    for (let i = 0; i < pairs.length; i += 2) {
      const quota = decodeQuota(pairs[i + 1]);
      if (pairs[i] === DEFAULT_FIELD) quotas.default = quota;
      else (quotas.groups ??= userKeyed<GroupQuota>())[pairs[i].slice(1)] = quota;
    }
    return quotas;
  }
}

function quotaList(quotas: GroupQuotas | null): GroupQuota[] {
  return [...(quotas?.default ? [quotas.default] : []), ...Object.values(quotas?.groups ?? {})];
}

/** How scaleByWeight is stored: 1 true (what prelude-quotas.lua looks for), 2 false, 0 not given. */
const SCALE_CODES = new Map([
  [true, 1],
  [false, 2],
]);

/** '<max> <perMs> <scaleByWeight code> <handlerMs, 0: none>', as prelude-quotas.lua reads it. */
function encodeQuota(quota: GroupQuota): string {
  const scale = quota.scaleByWeight === undefined ? 0 : SCALE_CODES.get(quota.scaleByWeight);
  return `${quota.max} ${quota.perMs} ${scale} ${quota.handlerMs ?? 0}`;
}

function decodeQuota(text: string): GroupQuota {
  const [max, perMs, scale, handlerMs] = text.split(' ').map(Number);
  return {
    max,
    perMs,
    ...(scale > 0 ? { scaleByWeight: scale === 1 } : {}),
    ...(handlerMs > 0 ? { handlerMs } : {}),
  };
}
