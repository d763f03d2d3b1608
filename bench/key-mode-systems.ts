// The workloads of `npm run bench:keys`: a plain push and each key mode on a hot key and on
// distinct keys, for this project (push options) and, where it has the equivalent, for BullMQ
// (its `deduplication` job option). No consumer runs: every message stays where the push left it.
import { type JobsOptions, Queue } from 'bullmq';
import type { PushOptions, RedisAckQueueService } from '../lib';
import { message } from './adapter';

/** Long enough that nothing falls due, and no window or ttl runs out, while a run lasts. */
export const HOLD_MS = 600_000;

/** The key of push `seq` of a workload: one hot key, or one key per push. */
type KeyOf = (seq: number) => string;
const hot: KeyOf = () => 'hot';
const distinct: KeyOf = (seq) => `key-${seq}`;

/** What a push of a workload did, as this project answers it. */
export type Outcome = 'stored' | 'duplicate' | 'debounced' | 'superseded';

export interface KeyWorkload {
  /** Short name, for logs and the report's rows. */
  name: string;
  /** Push options of push `seq` (`undefined`: plain). */
  ours: (seq: number) => PushOptions | undefined;
  /** What every measured push does (the untimed push before them stored the hot key's message). */
  expected: Outcome;
  /** Plain messages pushed before the run (untimed), waiting ahead of the key's message. */
  backlog?: number;
  /** BullMQ's job options of the equivalent, or why BullMQ has none. */
  bullmq: { opts: (seq: number) => JobsOptions; option: string } | { none: string };
}

const debounce = (key: KeyOf) => (seq: number) => ({ debounce: { key: key(seq), delayMs: HOLD_MS } });
const bullDebounce = (key: KeyOf) => (seq: number) => ({
  delay: HOLD_MS,
  deduplication: { id: key(seq), ttl: HOLD_MS, extend: true, replace: true },
});
const throttle = (key: KeyOf) => (seq: number) => ({ throttle: { key: key(seq), windowMs: HOLD_MS } });
const bullThrottle = (key: KeyOf) => (seq: number) => ({ deduplication: { id: key(seq), ttl: HOLD_MS } });
const supersede = (key: KeyOf, running: 'keep' | 'cancel') => (seq: number) => ({
  supersede: { key: key(seq), running },
});

/** BullMQ replaces a waiting job only while it is delayed (`replace`); a later add of a waiting one is dropped. */
const NO_WAITING_REPLACE =
  'none: `keepLastIfActive` keeps the latest data only while the job is active; a waiting job is replaced only ' +
  'while delayed (`replace`), so a hot key with no consumer keeps its first add and drops the rest';
const NO_CANCEL = 'none: no deduplication option cancels the active job';

export const WORKLOADS: KeyWorkload[] = [
  {
    name: 'plain',
    ours: () => undefined,
    expected: 'stored',
    bullmq: { opts: () => ({}), option: 'none (a plain add)' },
  },
  {
    name: 'debounce, hot key',
    ours: debounce(hot),
    expected: 'debounced',
    bullmq: { opts: bullDebounce(hot), option: '`delay`, `deduplication: { id, ttl, extend: true, replace: true }`' },
  },
  {
    name: 'debounce, distinct keys',
    ours: debounce(distinct),
    expected: 'stored',
    bullmq: { opts: bullDebounce(distinct), option: 'the same' },
  },
  {
    name: 'throttle, hot key',
    ours: throttle(hot),
    expected: 'duplicate',
    bullmq: { opts: bullThrottle(hot), option: '`deduplication: { id, ttl }`' },
  },
  {
    name: 'throttle, distinct keys',
    ours: throttle(distinct),
    expected: 'stored',
    bullmq: { opts: bullThrottle(distinct), option: 'the same' },
  },
  {
    name: "supersede 'keep', hot key",
    ours: supersede(hot, 'keep'),
    expected: 'superseded',
    bullmq: { none: NO_WAITING_REPLACE },
  },
  {
    // A replaced waiting message leaves the ready list (LREM, from the head) and goes back to its tail.
    name: "supersede 'keep', hot key, 10,000 waiting ahead",
    ours: supersede(hot, 'keep'),
    expected: 'superseded',
    backlog: 10_000,
    bullmq: { none: NO_WAITING_REPLACE },
  },
  {
    name: "supersede 'keep', distinct keys",
    ours: supersede(distinct, 'keep'),
    expected: 'stored',
    bullmq: {
      opts: (seq) => ({ deduplication: { id: distinct(seq), keepLastIfActive: true } }),
      option: '`deduplication: { id, keepLastIfActive: true }` (every add stores: the same path)',
    },
  },
  {
    name: "supersede 'cancel', hot key",
    ours: supersede(hot, 'cancel'),
    expected: 'superseded',
    bullmq: { none: NO_CANCEL },
  },
  {
    name: "supersede 'cancel', distinct keys",
    ours: supersede(distinct, 'cancel'),
    expected: 'stored',
    bullmq: { none: NO_CANCEL },
  },
];

const PREFILL_BATCH = 1_000;

/** How a run sends its pushes: single calls with some in flight, or batches one after another. */
export type CallStyle = 'single' | 'batch';

/** One system's pushes of one workload on a topic (queue) of its own. */
export interface KeyPusher {
  /** Pushes `total` plain messages in batches (the workload's backlog). */
  prefill(total: number): Promise<void>;
  /** Pushes `seqs` (one call each, or one batch call); counts what each push did where the system says. */
  push(seqs: number[], style: CallStyle): Promise<void>;
  /** What the pushes did, by outcome (this project only). */
  readonly outcomes: Map<Outcome, number>;
  /** Messages (jobs) stored on the topic now. */
  stored(): Promise<number>;
  close(): Promise<void>;
}

const outcomeOf = (result: { duplicate?: boolean; debounced?: true; superseded?: true }): Outcome =>
  result.debounced ? 'debounced' : result.superseded ? 'superseded' : result.duplicate ? 'duplicate' : 'stored';

/** This project's pushes of `workload` to `topic`, through one service shared by every run. */
export function oursPusher(queue: RedisAckQueueService, topic: string, workload: KeyWorkload): KeyPusher {
  const outcomes = new Map<Outcome, number>();
  const count = (result: Parameters<typeof outcomeOf>[0]) => {
    const outcome = outcomeOf(result);
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  };
  return {
    outcomes,
    async prefill(total) {
      for (let from = 0; from < total; from += PREFILL_BATCH) {
        const size = Math.min(PREFILL_BATCH, total - from);
        await queue.pushMany(
          topic,
          Array.from({ length: size }, (_, i) => ({ payload: message(-2 - from - i) })),
        );
      }
    },
    async push(seqs, style) {
      if (style === 'single') {
        count(await queue.push(topic, message(seqs[0]), workload.ours(seqs[0])));
        return;
      }
      const results = await queue.pushMany(
        topic,
        seqs.map((seq) => ({ payload: message(seq), ...workload.ours(seq) })),
      );
      results.forEach(count);
    },
    async stored() {
      const stats = await queue.stats(topic);
      return stats.ready + stats.delayed;
    },
    close: () => Promise.resolve(),
  };
}

/** BullMQ's adds of `workload` to a queue named `topic`, with its equivalent job options. */
export async function bullmqPusher(url: string, topic: string, workload: KeyWorkload): Promise<KeyPusher> {
  if (!('opts' in workload.bullmq)) throw new Error(`BullMQ has no equivalent of ${workload.name}`);
  const { opts } = workload.bullmq;
  const queue = new Queue(topic, {
    connection: { host: '127.0.0.1', port: Number(new URL(url).port), maxRetriesPerRequest: null },
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
  });
  await queue.waitUntilReady();
  return {
    outcomes: new Map(),
    async prefill(total) {
      for (let from = 0; from < total; from += PREFILL_BATCH) {
        const size = Math.min(PREFILL_BATCH, total - from);
        await queue.addBulk(Array.from({ length: size }, (_, i) => ({ name: 'job', data: message(-2 - from - i) })));
      }
    },
    async push(seqs, style) {
      if (style === 'single') await queue.add('job', message(seqs[0]), opts(seqs[0]));
      else await queue.addBulk(seqs.map((seq) => ({ name: 'job', data: message(seq), opts: opts(seq) })));
    },
    async stored() {
      const counts = await queue.getJobCounts('waiting', 'delayed', 'prioritized');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    },
    close: () => queue.close(),
  };
}
