import type { GroupUsageCounts } from '../../interfaces';

/**
 * The stored form of a topic's usage per group: one HASH per topic (`QueueKeys.groupUsage`) whose
 * field `<minute % HISTORY_SLOTS>` holds every group's counts of that minute in one string, so the
 * hash never holds more than HISTORY_SLOTS fields and an old minute is overwritten in place (as
 * the history, see history-format.ts):
 *
 *   `<minute>` then, per group, `\0<group>\0<handled>,<handler ms>,<retried>,<dead>`
 *
 * with trailing `,0`s left out (a group that only acked costs `\0<group>\0<handled>,<ms>`). NUL
 * separates, since a group's name never holds one (see assertGroup). Handler ms are whole ms.
 * The minute counting now and the one before are kept apart, each as a hash of its own (group -> counts) so a
 * flush costs a field per group it sent rather than a rewrite of the whole minute; the ring's
 * field `open` lists such minutes (see history-record.lua).
 * `failed` is not stored: every delivery counted per group that did not end in an ack failed
 * (retried + dead), see GroupTally. history-record.lua merges a minute from any number of
 * processes by group.
 */
export const GROUP_SEPARATOR = '\0';

/** One group's counts of one minute, as a process collects them. */
export class GroupTally {
  handled = 0;
  retried = 0;
  dead = 0;
  handlerMs = 0;

  /** The counts as history-record.lua takes them: `<handled>,<ms>,<retried>,<dead>` without trailing zeros. */
  encode(): string {
    const values = [this.handled, Math.round(this.handlerMs), this.retried, this.dead];
    let end = values.length;
    while (end > 1 && values[end - 1] === 0) end--;
    return values.slice(0, end).join(',');
  }
}

/** The groups of one minute as history-record.lua takes them: `\0<group>\0<counts>` each ('' when none). */
export function encodeGroupMinute(groups: ReadonlyMap<string, GroupTally> | undefined): string {
  if (!groups || groups.size === 0) return '';
  let out = '';
  for (const [group, tally] of groups) out += `${GROUP_SEPARATOR}${group}${GROUP_SEPARATOR}${tally.encode()}`;
  return out;
}

/** Decodes `<handled>,<ms>,<retried>,<dead>` (trailing values optional) into counts; unreadable parts count 0. */
export function decodeGroupCounts(text: string): GroupUsageCounts {
  const [handled, handlerMs, retried, dead] = text.split(',').map((n) => Number(n) || 0);
  const r = retried ?? 0;
  const d = dead ?? 0;
  return { handled: handled ?? 0, failed: r + d, retried: r, dead: d, handlerMs: handlerMs ?? 0 };
}

/**
 * Calls `each(group, counts text)` for every group of a stored minute (`<minute>\0<group>\0<counts>...`);
 * returns the minute, or undefined when `stored` is not one.
 */
export function eachGroupOf(stored: string, each: (group: string, counts: string) => void): number | undefined {
  const parts = stored.split(GROUP_SEPARATOR);
  const minute = Number(parts[0]);
  if (parts[0] === '' || !Number.isInteger(minute)) return undefined;
  for (let i = 1; i + 1 < parts.length; i += 2) each(parts[i], parts[i + 1]);
  return minute;
}
