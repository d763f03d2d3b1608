import { encodeGroupMinute } from '../codecs/group-usage-format';
import { HISTORY_SLOTS, HISTORY_TTL_MS, MinuteRecord } from '../codecs/history-format';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/** The stored minutes of a range of steps, as history-read.lua answers them. */
export interface StoredHistory {
  /** Start of the first and of the last step (epoch ms, server clock). */
  from: number;
  to: number;
  records: MinuteRecord[];
}

/** A page of a topic's usage per group, as group-usage-read.lua answers it. */
export interface StoredGroupUsage {
  /** Start of the range's first and last minutes (epoch ms, server clock). */
  from: number;
  to: number;
  /** Start of the first minute not read yet; undefined when this page ends the range. */
  next: number | undefined;
  /** The stored minutes read (see group-usage-format.ts), oldest first. */
  minutes: string[];
}

/** Minutes read per group-usage-read.lua call: a 24-hour read is 24 short calls, not one long one. */
export const GROUP_USAGE_PAGE_MINUTES = 60;

/**
 * A topic's history in Redis: one hash in the topic's home slot (its plain tag, whatever its
 * partition count), written by every producer and consumer process and merged by
 * history-record.lua; beside it, in the same slot and the same call, its usage per group.
 */
export class HistoryStore {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Adds `records` to the topic's history; resolves with the server's time (ms). */
  async record(topic: string, records: MinuteRecord[]): Promise<number> {
    const args = [
      HISTORY_SLOTS,
      HISTORY_TTL_MS,
      ...records.flatMap((record) => [...record.toArgs(), encodeGroupMinute(record.groups)]),
    ];
    return Number(await this.scripts.run<number>('historyRecord', topic, this.layouts.get(topic).home, args));
  }

  /**
   * The records of the minutes in the steps from `from` to `to` (undefined: now on the server's
   * clock, and `lastMs` before it).
   */
  async read(
    topic: string,
    range: { stepMs: number; lastMs: number; from?: number; to?: number },
  ): Promise<StoredHistory> {
    const { stepMs, lastMs, from, to } = range;
    const args = [HISTORY_SLOTS, stepMs, from ?? '', to ?? '', lastMs];
    const reply = await this.scripts.run<(number | string)[]>('historyRead', topic, this.layouts.get(topic).home, args);
    const records: MinuteRecord[] = [];
    for (const stored of reply.slice(2)) {
      const record = MinuteRecord.decode(String(stored));
      if (record) records.push(record);
    }
    return { from: Number(reply[0]), to: Number(reply[1]), records };
  }

  /**
   * One page of the stored minutes of a topic's usage per group from `from` to `to` (undefined:
   * now on the server's clock, and `lastMs` before it); read the rest from `next`.
   */
  async readGroupUsage(
    topic: string,
    range: { lastMs: number; from?: number; to?: number },
  ): Promise<StoredGroupUsage> {
    const { lastMs, from, to } = range;
    const args = [HISTORY_SLOTS, from ?? '', to ?? '', lastMs, GROUP_USAGE_PAGE_MINUTES];
    const reply = await this.scripts.run<(number | string)[]>(
      'groupUsageRead',
      topic,
      this.layouts.get(topic).home,
      args,
    );
    const next = Number(reply[2]);
    return {
      from: Number(reply[0]),
      to: Number(reply[1]),
      next: next >= 0 ? next : undefined,
      minutes: reply.slice(3).map(String),
    };
  }
}
