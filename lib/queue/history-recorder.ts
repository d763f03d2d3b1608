import { MESSAGES } from '../common/redis-ack-queue.messages';
import { errorSummary } from '../errors/error-text';
import type { DeadLetterReason } from '../interfaces';
import { HISTORY_MINUTES, MINUTE_MS, MinuteRecord } from '../engine/codecs/history-format';
import type { HistoryStore } from '../engine/stores/history-store';
import type { QueueLogger } from '../observability/queue-logger';
import type { DeliveryTally, SettledOutcome } from './delivery-tally';

/** What one topic counted since its last flush. */
interface TopicRecords {
  topic: string;
  /** The minute counting now; undefined until something happens after a flush. */
  current: MinuteRecord | undefined;
  /** Its start and end on performance.now()'s clock (the server's minute, as this process reckons it). */
  start: number;
  end: number;
  /** Earlier minutes not sent yet (a minute that ended, or a flush that failed). */
  earlier: MinuteRecord[];
}

/** How often a process sends what it counted: at most this much is lost if it is killed. */
export const HISTORY_FLUSH_MS = 1_000;

/**
 * The history this process records: what it pushed, settled and cancelled, per topic and per
 * minute of the server's clock (and, for grouped deliveries, per group: see group-usage-format.ts), counted in memory and added to Redis once a second per topic
 * (one history-record.lua call each). A failed flush keeps its counts for the next one
 * (at most 25 hours' worth per topic). It learns the server clock's offset from each flush's
 * answer, so minutes are the server's. Owns its timer; close() sends what is left.
 */
export class HistoryRecorder implements DeliveryTally {
  private readonly topics = new Map<string, TopicRecords>();
  /** Server clock less this process's (performance.timeOrigin + performance.now()), as the last flush measured it. */
  private offsetMs = 0;
  /** The topic counted last: most calls are for the same one. */
  private last: TopicRecords | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** After close(): no timer starts again (the connection is closing). */
  private closed = false;
  /** Topics whose last flush failed: one warning per failing streak. */
  private readonly failing = new Set<string>();

  constructor(
    private readonly store: HistoryStore,
    private readonly logger: QueueLogger,
  ) {}

  pushed(topic: string, count: number): void {
    this.recordOf(topic, performance.now()).pushed += count;
  }

  settled(
    topic: string,
    outcome: SettledOutcome,
    durationMs: number | undefined,
    waitMs: number | undefined,
    _reason?: DeadLetterReason,
    endedAt = performance.now(),
    group?: string,
  ): void {
    const record = this.recordOf(topic, endedAt);
    record[outcome] += 1;
    if (durationMs !== undefined) record.handling.add(durationMs);
    if (waitMs !== undefined) record.wait.add(waitMs);
    if (group !== undefined) {
      const tally = record.groupTally(group);
      if (outcome === 'acked') tally.handled += 1;
      else tally[outcome] += 1;
      if (durationMs !== undefined) tally.handlerMs += durationMs;
    }
  }

  cancelled(topic: string, count: number): void {
    this.recordOf(topic, performance.now()).cancelled += count;
  }

  expired(topic: string): void {
    this.recordOf(topic, performance.now()).expired += 1;
  }

  /** Stops the timer and sends what is left (once; a failure is logged, not thrown). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush();
  }

  /** Sends what every topic counted; one flush at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.flushAll().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** The record counting now (`at`: performance.now()) for `topic`. */
  private recordOf(topic: string, at: number): MinuteRecord {
    let records = this.last;
    if (records?.topic !== topic) {
      records = this.topics.get(topic);
      if (!records) {
        records = { topic, current: undefined, start: 0, end: 0, earlier: [] };
        this.topics.set(topic, records);
      }
      this.last = records;
    }
    const { current } = records;
    if (current !== undefined && at >= records.start && at < records.end) return current;
    return this.startMinute(records, at);
  }

  /** A new minute's record: times are kept on performance.now()'s clock, which is cheaper to read. */
  private startMinute(records: TopicRecords, at: number): MinuteRecord {
    if (records.current) records.earlier.push(records.current);
    const minute = Math.floor((performance.timeOrigin + at + this.offsetMs) / MINUTE_MS);
    records.current = new MinuteRecord(minute);
    records.start = minute * MINUTE_MS - performance.timeOrigin - this.offsetMs;
    records.end = records.start + MINUTE_MS;
    if (!this.closed) this.timer ??= setInterval(() => void this.flush(), HISTORY_FLUSH_MS).unref();
    return records.current;
  }

  private async flushAll(): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [topic, records] of this.topics) {
      if (records.current === undefined && records.earlier.length === 0) continue;
      const taken = records.current ? [...records.earlier, records.current] : records.earlier;
      records.current = undefined;
      records.earlier = [];
      sends.push(this.send(topic, taken));
    }
    await Promise.all(sends);
  }

  private async send(topic: string, taken: MinuteRecord[]): Promise<void> {
    const sentAt = performance.now();
    try {
      const serverNow = await this.store.record(topic, taken);
      this.offsetMs = serverNow - performance.timeOrigin - (sentAt + performance.now()) / 2;
      this.failing.delete(topic);
    } catch (error) {
      const records = this.topics.get(topic);
      if (records) records.earlier = [...taken, ...records.earlier].slice(-HISTORY_MINUTES);
      if (!this.failing.has(topic)) {
        this.failing.add(topic);
        this.logger.warn(MESSAGES.historyNotRecorded(topic, errorSummary(error)));
      }
    }
  }
}
