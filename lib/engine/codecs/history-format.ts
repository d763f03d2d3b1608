import type { HistoryTimes } from '../../interfaces';
import { GroupTally } from './group-usage-format';

/**
 * The stored form of a topic's history: one HASH per topic (`QueueKeys.history`) whose field
 * `<minute % HISTORY_SLOTS>` holds that minute's record, so the hash never holds more than
 * HISTORY_SLOTS fields and an old minute is overwritten in place, with no trimming:
 *
 *   `<minute>|<pushed>|<acked>|<retried>|<dead>|<cancelled>|<wait sum>|<handling sum>|<wait buckets>|<handling buckets>`
 *
 * and, for a minute in which messages expired (their start-by deadline passed), the field
 * `x<minute % HISTORY_SLOTS>` holds `<minute>|<expired>`: a field of its own, so the records of
 * releases that do not count it keep their layout (history-read.lua appends it as an 11th value).
 *
 * `minute` is epoch ms / 60 000 (server clock); sums are ms; buckets are `<index>:<count>`
 * joined by ',' (only those that counted something). history-record.lua merges records
 * from any number of processes in Redis.
 */
export const HISTORY_SLOTS = 1500;
/** Minutes kept: 25 hours, so a read of the last 24 hours is always whole. */
export const HISTORY_MINUTES = HISTORY_SLOTS;
/** The key expires this long after its last write: a topic nobody uses leaves nothing. */
export const HISTORY_TTL_MS = HISTORY_MINUTES * 60_000;
export const MINUTE_MS = 60_000;

/** Buckets are 2^(1/4) apart from 0.1 ms: bucket i holds (0.1 * 2^((i-1)/4), 0.1 * 2^(i/4)] ms. */
const BUCKETS_PER_DOUBLING = 4;
const SMALLEST_MS = 0.1;
/** The last bucket (about 30 hours) takes every longer time. */
export const TOP_BUCKET = 120;

/** The bucket a time (ms) is counted in. */
export function bucketOf(ms: number): number {
  if (!(ms > SMALLEST_MS)) return 0;
  const index = Math.ceil(Math.log2(ms / SMALLEST_MS) * BUCKETS_PER_DOUBLING - 1e-9);
  return index > TOP_BUCKET ? TOP_BUCKET : index;
}

/** What a bucket reports: its geometric middle, within 9.1 % of any time it holds. */
function bucketValue(index: number): number {
  return SMALLEST_MS * 2 ** ((index - 0.5) / BUCKETS_PER_DOUBLING);
}

/** The times of one minute (or step): a count per bucket and their sum. */
export class TimeHistogram {
  /** Counts by bucket: an array, since adding one runs once per delivery. */
  readonly counts = new Float64Array(TOP_BUCKET + 1);
  count = 0;
  sum = 0;

  add(ms: number): void {
    this.counts[bucketOf(ms)] += 1;
    this.count += 1;
    this.sum += ms;
  }

  merge(other: TimeHistogram): void {
    if (other.count === 0) return;
    for (let i = 0; i <= TOP_BUCKET; i++) this.counts[i] += other.counts[i];
    this.count += other.count;
    this.sum += other.sum;
  }

  /** `<index>:<count>` pairs of the buckets that counted something, by index. */
  encode(): string {
    const pairs: string[] = [];
    for (let i = 0; i <= TOP_BUCKET; i++) if (this.counts[i] > 0) pairs.push(`${i}:${this.counts[i]}`);
    return pairs.join(',');
  }

  static decode(buckets: string, sum: string): TimeHistogram {
    const histogram = new TimeHistogram();
    for (const pair of buckets === '' ? [] : buckets.split(',')) {
      const [index, n] = pair.split(':').map(Number);
      if (!Number.isInteger(index) || index < 0 || index > TOP_BUCKET || !(n > 0)) continue;
      histogram.counts[index] += n;
      histogram.count += n;
    }
    histogram.sum = Number(sum) || 0;
    return histogram;
  }

  /** Percentiles as the public API reports them. */
  times(): HistoryTimes {
    if (this.count === 0) return { count: 0 };
    const at = (q: number) => {
      const rank = Math.max(1, Math.ceil(q * this.count));
      let seen = 0;
      for (let i = 0; i <= TOP_BUCKET; i++) {
        seen += this.counts[i];
        if (seen >= rank) return round(bucketValue(i));
      }
      return round(bucketValue(TOP_BUCKET));
    };
    return { count: this.count, p50: at(0.5), p95: at(0.95), p99: at(0.99), mean: round(this.sum / this.count) };
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** The counts of one minute. */
export interface MinuteCounts {
  pushed: number;
  acked: number;
  retried: number;
  dead: number;
  cancelled: number;
}

export const COUNT_NAMES = ['pushed', 'acked', 'retried', 'dead', 'cancelled'] as const;

/** One minute's record, as a process collects it and as Redis keeps the sum of all of them. */
export class MinuteRecord implements MinuteCounts {
  pushed = 0;
  acked = 0;
  retried = 0;
  dead = 0;
  cancelled = 0;
  /** Messages whose start-by deadline passed (kept in a field of its own, see above). */
  expired = 0;
  readonly wait = new TimeHistogram();
  readonly handling = new TimeHistogram();
  /** Counts per group of grouped deliveries (see group-usage-format.ts); undefined until one is counted. */
  groups: Map<string, GroupTally> | undefined;

  constructor(readonly minute: number) {}

  /** `group`'s counts of this minute. */
  groupTally(group: string): GroupTally {
    const groups = (this.groups ??= new Map<string, GroupTally>());
    let tally = groups.get(group);
    if (!tally) groups.set(group, (tally = new GroupTally()));
    return tally;
  }

  merge(other: MinuteRecord): void {
    for (const name of COUNT_NAMES) this[name] += other[name];
    this.expired += other.expired;
    this.wait.merge(other.wait);
    this.handling.merge(other.handling);
    for (const [group, counts] of other.groups ?? []) {
      const tally = this.groupTally(group);
      tally.handled += counts.handled;
      tally.retried += counts.retried;
      tally.dead += counts.dead;
      tally.handlerMs += counts.handlerMs;
    }
  }

  /** The first eleven arguments history-record.lua takes per minute: the stored order, then `expired`. */
  toArgs(): string[] {
    return [
      String(this.minute),
      ...COUNT_NAMES.map((name) => String(this[name])),
      String(this.wait.sum),
      String(this.handling.sum),
      this.wait.encode(),
      this.handling.encode(),
      String(this.expired),
    ];
  }

  /** A stored record (with `expired` as an 11th value, as history-read.lua answers it); undefined when it is not one. */
  static decode(stored: string): MinuteRecord | undefined {
    const fields = stored.split('|');
    if (fields.length !== 10 && fields.length !== 11) return undefined;
    const minute = Number(fields[0]);
    if (!Number.isInteger(minute)) return undefined;
    const record = new MinuteRecord(minute);
    COUNT_NAMES.forEach((name, i) => (record[name] = Number(fields[i + 1]) || 0));
    record.wait.merge(TimeHistogram.decode(fields[8], fields[6]));
    record.handling.merge(TimeHistogram.decode(fields[9], fields[7]));
    record.expired = Number(fields[10]) || 0;
    return record;
  }
}
