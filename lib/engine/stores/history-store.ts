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

/**
 * A topic's history in Redis: one hash in the topic's home slot (its plain tag, whatever its
 * partition count), written by every producer and consumer process and merged by
 * history-record.lua.
 */
export class HistoryStore {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Adds `records` to the topic's history; resolves with the server's time (ms). */
  async record(topic: string, records: MinuteRecord[]): Promise<number> {
    const args = [HISTORY_SLOTS, HISTORY_TTL_MS, ...records.flatMap((record) => record.toArgs())];
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
}
