import type { QueueGauges, QueueStats } from '../../interfaces';
import { LIMITS } from '../../common/redis-ack-queue.constants';
import type { QueueKeys } from '../keys/queue-keys';
import type { ScriptRunner } from '../scripts/script-runner';
import { byPartition, type TopicLayouts } from '../scripts/topic-layouts';
import { decodeDeadLetters, decodeListOrder, type PreviewedDeadLetter } from '../codecs/lookup-format';
import { readMergedPage } from '../codecs/merged-pages';
import { FlowChildGoneError } from '../../errors';
import type { FlowRequeue } from './flow-requeue';

export type DeadSweep = 'deadRequeue' | 'deadPurge';

/**
 * The engine's reads and dead-letter sweeps, over every partition of a topic: counts by
 * state, pages of dead letters merged by time of death, requeue and purge in bounded slices.
 */
export class QueueInspector {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly flows: FlowRequeue,
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

  /**
   * Requeues or purges the given dead letters, or all of them; returns how many. A flow's parent
   * dead as child-failed is requeued with its failed children (see FlowRequeue); one with a failed
   * child gone for good stays: named by FlowChildGoneError when ids are given (then nothing is
   * requeued), passed over (not counted) when all are.
   * @throws {FlowChildGoneError} when a given id is such a parent.
   */
  async sweepDead(sweep: DeadSweep, topic: string, ids?: string[]): Promise<number> {
    const layout = this.layouts.get(topic);
    const slices =
      ids === undefined
        ? undefined
        : [
            ...byPartition(
              layout,
              ids.map((id) => ({ id })),
            ),
          ].map(([partition, positions]) => [partition, positions.map((i) => ids[i])] as const);
    if (sweep === 'deadRequeue' && slices) await this.refuseGoneChildren(topic, slices);
    const sweeps = slices
      ? slices.map(([partition, slice]) => this.sweepIds(sweep, topic, partition, slice))
      : layout.partitions.map((_, partition) => this.sweepAll(sweep, topic, partition));
    const total = (await Promise.all(sweeps)).reduce((sum, n) => sum + n, 0);
    if (sweep === 'deadRequeue' && total > 0) await this.scripts.wakeHome(layout);
    return total;
  }

  /** @throws {FlowChildGoneError} when a given dead letter is a parent with a failed child gone for good. */
  private async refuseGoneChildren(topic: string, slices: (readonly [number, string[]])[]): Promise<void> {
    for (const [partition, ids] of slices) {
      for (const id of ids) {
        if (!(await this.flows.isDeadParent(topic, partition, id))) continue;
        const gone = await this.flows.goneBelow({ topic, id, partition });
        if (gone) throw new FlowChildGoneError(topic, id, gone.child.topic, gone.child.id);
      }
    }
  }

  private async sweepIds(sweep: DeadSweep, topic: string, partition: number, ids: string[]): Promise<number> {
    let total = 0;
    for (let i = 0; i < ids.length; i += LIMITS.idsPerCall) {
      total += (await this.sweepOnce(sweep, topic, partition, { ids: ids.slice(i, i + LIMITS.idsPerCall) })).done;
    }
    return total;
  }

  /**
   * All of them, a bounded slice per call so Redis never stalls on a huge dead set. Parents that
   * stay (a child gone for good) are passed over by the next slices.
   */
  private async sweepAll(sweep: DeadSweep, topic: string, partition: number): Promise<number> {
    let total = 0;
    let skip = 0;
    for (;;) {
      const { taken, done, stayed } = await this.sweepOnce(sweep, topic, partition, { limit: LIMITS.idsPerCall, skip });
      total += done;
      skip += stayed;
      if (taken < LIMITS.idsPerCall) return total;
    }
  }

  /** One call of the sweep's script; for a requeue, then the flow parents it left, each with its children. */
  private async sweepOnce(
    sweep: DeadSweep,
    topic: string,
    partition: number,
    { limit = 0, skip = 0, ids = [] }: { limit?: number; skip?: number; ids?: string[] },
  ) {
    const keys = this.layouts.get(topic).partitions[partition];
    // dead-purge takes no skip: its slices start at the oldest, as it leaves none behind.
    const args = sweep === 'deadRequeue' ? [limit, skip, ...ids] : [limit, ...ids];
    const [taken, done, ...parents] = await this.scripts.run<(number | string)[]>(sweep, topic, keys, args);
    let resumed = 0;
    for (const id of parents) {
      if (await this.flows.requeue({ topic, id: String(id), partition })) resumed++;
    }
    return { taken: Number(taken), done: Number(done) + resumed, stayed: parents.length - resumed };
  }
}

/** Counts with `waitingChildren` where flow parents wait (left out at 0, as before flows). */
function withWaiting<S extends QueueStats>(counts: S, waiting: number): S {
  return waiting > 0 ? { ...counts, waitingChildren: waiting } : counts;
}
