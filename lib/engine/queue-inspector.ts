import type { QueueGauges, QueueStats } from '../interfaces';
import { LIMITS } from '../common/redis-ack-queue.constants';
import type { QueueKeys } from './queue-keys';
import type { ScriptRunner } from './script-runner';
import { byPartition, type TopicLayouts } from './topic-layouts';
import { decodeDeadLetters, decodeListOrder, type PreviewedDeadLetter } from './lookup-format';
import { readMergedPage } from './merged-pages';

export type DeadSweep = 'deadRequeue' | 'deadPurge';

/**
 * The engine's reads and dead-letter sweeps, over every partition of a topic: counts by
 * state, pages of dead letters merged by time of death, requeue and purge in bounded slices.
 */
export class QueueInspector {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  async stats(topic: string): Promise<QueueStats> {
    const layout = this.layouts.get(topic);
    const replies = await Promise.all(
      layout.partitions.map((keys) => this.scripts.run<number[]>('stats', topic, keys, [])),
    );
    const sum = (i: number) => replies.reduce((total, reply) => total + reply[i], 0);
    const paused = replies.some((r) => r[4] === 1);
    return withWaiting({ ready: sum(0), delayed: sum(1), leased: sum(2), dead: sum(3), paused }, sum(5));
  }

  /** Counts and the oldest ready message's age, one read-only call per partition. */
  async gauges(topic: string): Promise<QueueGauges> {
    const layout = this.layouts.get(topic);
    const replies = await Promise.all(
      layout.partitions.map((keys) => this.scripts.run<number[]>('metrics', topic, keys, [])),
    );
    const sum = (i: number) => replies.reduce((total, reply) => total + reply[i], 0);
    const oldestReadyAgeMs = Math.max(-1, ...replies.map((reply) => reply[4]));
    const paused = replies.some((reply) => reply[5] === 1);
    return withWaiting<QueueGauges>(
      {
        ready: sum(0),
        delayed: sum(1),
        leased: sum(2),
        dead: sum(3),
        paused,
        oldestReadyAgeMs,
        completed: sum(6),
        pushedTotal: sum(7),
        ackedTotal: sum(8),
      },
      sum(9),
    );
  }

  /** A page of dead letters, oldest first; with `preview` (bytes), payloads cut in Redis. */
  async deadLetters<T>(topic: string, offset: number, limit: number, preview = 0): Promise<PreviewedDeadLetter<T>[]> {
    const { partitions } = this.layouts.get(topic);
    const rows = async (keys: QueueKeys, skip: number, take: number) => {
      const args = preview > 0 ? [skip, take, preview] : [skip, take];
      const reply = await this.scripts.run<(string | number | null)[]>('deadList', topic, keys, args);
      return decodeDeadLetters<T>(topic, reply, preview > 0);
    };
    if (partitions.length === 1) return rows(partitions[0], offset, limit);
    return readMergedPage(partitions.length, offset, limit, {
      order: async (p, count) =>
        decodeListOrder(
          await this.scripts.run<(number | string)[]>('listOrder', topic, partitions[p], ['dead', count]),
          false,
        ),
      rows: (p, skip, take) => rows(partitions[p], skip, take),
    });
  }

  /** Requeues or purges the given dead letters, or all of them; returns how many. */
  async sweepDead(sweep: DeadSweep, topic: string, ids?: string[]): Promise<number> {
    const layout = this.layouts.get(topic);
    const sweeps =
      ids === undefined
        ? layout.partitions.map((keys) => this.sweepAll(sweep, topic, keys))
        : [
            ...byPartition(
              layout,
              ids.map((id) => ({ id })),
            ),
          ].map(([partition, positions]) =>
            this.sweepIds(
              sweep,
              topic,
              layout.partitions[partition],
              positions.map((i) => ids[i]),
            ),
          );
    const total = (await Promise.all(sweeps)).reduce((sum, n) => sum + n, 0);
    if (sweep === 'deadRequeue' && total > 0) await this.scripts.wakeHome(layout);
    return total;
  }

  private async sweepIds(sweep: DeadSweep, topic: string, keys: QueueKeys, ids: string[]): Promise<number> {
    let total = 0;
    for (let i = 0; i < ids.length; i += LIMITS.idsPerCall) {
      const [, done] = await this.scripts.run<number[]>(sweep, topic, keys, [
        0,
        ...ids.slice(i, i + LIMITS.idsPerCall),
      ]);
      total += done;
    }
    return total;
  }

  /** All of them, a bounded slice per call so Redis never stalls on a huge dead set. */
  private async sweepAll(sweep: DeadSweep, topic: string, keys: QueueKeys): Promise<number> {
    let total = 0;
    for (;;) {
      const [taken, done] = await this.scripts.run<number[]>(sweep, topic, keys, [LIMITS.idsPerCall]);
      total += done;
      if (taken < LIMITS.idsPerCall) return total;
    }
  }
}

/** Counts with `waitingChildren` where flow parents wait (left out at 0, as before flows). */
function withWaiting<S extends QueueStats>(counts: S, waiting: number): S {
  return waiting > 0 ? { ...counts, waitingChildren: waiting } : counts;
}
