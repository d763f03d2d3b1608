import { InvalidOptionError } from '../errors';
import type { GroupUsage, GroupUsageOptions, GroupUsageRow } from '../interfaces';
import { decodeGroupCounts, eachGroupOf } from '../engine/codecs/group-usage-format';
import type { QueueCore } from './queue-core';
import { MINUTE_MS } from '../engine/codecs/history-format';
import { checkTimeRange } from './time-range-options';
import { assertTopic } from './validation';

export const GROUP_USAGE_TOP = { default: 10, max: 1_000 } as const;

/**
 * Reads what a topic's groups used (see RedisAckQueueFleetApi), as every process's history
 * recorder counted it per minute: a part of RedisAckQueueService. Redis answers the stored
 * minutes an hour per call (see HistoryStore.readGroupUsage); they are added up here, so the
 * server never spends long on a read, whatever its range.
 */
export class GroupUsageReads {
  constructor(private readonly core: QueueCore) {}

  async groupUsage(topic: string, options?: GroupUsageOptions | null): Promise<GroupUsage> {
    const { store } = this;
    let top: number = GROUP_USAGE_TOP.default;
    const { from, to, minutes } = await this.core.call('read usage per group', topic, async () => {
      assertTopic(topic);
      const range = checkGroupUsageOptions(options);
      top = range.top;
      let page = await store.readGroupUsage(topic, range);
      const read = { from: page.from, to: page.to, minutes: page.minutes };
      while (page.next !== undefined) {
        this.core.assertOpen('read usage per group');
        page = await store.readGroupUsage(topic, { lastMs: range.lastMs, from: page.next, to: read.to });
        read.minutes.push(...page.minutes);
      }
      return read;
    });
    return usageOf(topic, from, to, minutes, top);
  }

  private get store() {
    return this.core.engine.history;
  }
}

/** A range as the engine reads it, and how many groups to answer. */
interface GroupUsageRange {
  lastMs: number;
  from?: number;
  to?: number;
  top: number;
}

function checkGroupUsageOptions(options: GroupUsageOptions | null | undefined): GroupUsageRange {
  if (options !== undefined && options !== null && typeof options !== 'object')
    throw new InvalidOptionError('options', options, 'an object { from?, to?, lastMs?, top? }');
  const { top = GROUP_USAGE_TOP.default } = options ?? {};
  const { from, to, lastMs } = checkTimeRange(options ?? {});
  if (typeof top !== 'number' || !Number.isInteger(top) || top < 1 || top > GROUP_USAGE_TOP.max)
    throw new InvalidOptionError('top', top, `a whole number from 1 to ${GROUP_USAGE_TOP.max}`);
  return { from, to, lastMs, top };
}

/** [handled, retried, dead, handler ms] of one group over the range. */
type Totals = [number, number, number, number];

/**
 * The top groups by handler time (ties by name) over the stored minutes: a first pass adds up
 * every group's totals, a second collects the minutes of the top ones only, so a read of 1,000
 * groups over a day makes no object per group and minute but those it answers.
 */
function usageOf(topic: string, from: number, to: number, minutes: string[], top: number): GroupUsage {
  const totals = new Map<string, Totals>();
  for (const stored of minutes) {
    eachGroupOf(stored, (group, text) => {
      const values = text.split(',');
      let sums = totals.get(group);
      if (!sums) totals.set(group, (sums = [0, 0, 0, 0]));
      sums[0] += Number(values[0]) || 0;
      sums[1] += Number(values[2]) || 0;
      sums[2] += Number(values[3]) || 0;
      sums[3] += Number(values[1]) || 0;
    });
  }
  const ranked = [...totals].sort(([a, x], [b, y]) => y[3] - x[3] || (a < b ? -1 : a > b ? 1 : 0)).slice(0, top);
  const rows = new Map<string, GroupUsageRow>();
  for (const [group, [handled, retried, dead, handlerMs]] of ranked)
    rows.set(group, { group, handled, failed: retried + dead, retried, dead, handlerMs, minutes: [] });
  for (const stored of minutes) {
    const at = parseInt(stored, 10) * MINUTE_MS;
    eachGroupOf(stored, (group, text) => {
      const row = rows.get(group);
      if (!row) return;
      const counts = decodeGroupCounts(text);
      if (counts.handled + counts.failed > 0 || counts.handlerMs > 0) row.minutes.push({ at, ...counts });
    });
  }
  const end = to + MINUTE_MS;
  return { topic, from, to: end > from ? end : from, groupCount: totals.size, groups: [...rows.values()] };
}
