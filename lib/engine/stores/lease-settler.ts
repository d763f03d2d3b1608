import { LIMITS } from '../../common/redis-ack-queue.constants';
import type { HeldLease, SettleAction } from '../codecs/lease-shapes';
import type { ScriptRunner } from '../scripts/script-runner';
import type { FlowEnds } from './flow-trees';
import { byPartition, type TopicLayout, type TopicLayouts } from '../scripts/topic-layouts';

/**
 * Settles leases with ack.lua, extend.lua and release.lua, and reads their answers; the acks of
 * a flow's children are passed on to their parents before a settle resolves.
 */
export class LeaseSettler {
  /** Redis server time minus local time, as of the last reserve (for ackFlags). */
  serverOffsetMs = 0;

  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly flows: FlowEnds,
  ) {}

  /**
   * Acks, extends or releases leases, at most 500 per script call (per partition), all sent
   * at once. The callers have checked the arguments.
   */
  async settle(action: SettleAction, topic: string, leases: HeldLease[], leaseMs = 0): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    const calls: Promise<void>[] = [];
    const flags = new Array<boolean>(leases.length);
    // A partition's script woke its own consumers: those of a partitioned topic wait in its home slot.
    let woke = false;
    for (const [partition, positions] of byPartition(layout, leases)) {
      for (let start = 0; start < positions.length; start += LIMITS.idsPerCall) {
        const batch = positions.slice(start, start + LIMITS.idsPerCall);
        calls.push(
          this.settleBatch(
            action,
            layout,
            partition,
            batch.map((i) => leases[i]),
            leaseMs,
          ).then((answers) => {
            batch.forEach((position, k) => (flags[position] = answers.flags[k]));
            woke ||= answers.woke;
          }),
        );
      }
    }
    await (calls.length === 1 ? calls[0] : Promise.all(calls));
    if (woke) await this.scripts.wakeHome(layout);
    return flags;
  }

  private async settleBatch(
    action: SettleAction,
    layout: TopicLayout,
    partition: number,
    leases: HeldLease[],
    leaseMs: number,
  ): Promise<{ flags: boolean[]; woke: boolean }> {
    const args: (string | number)[] = action === 'extend' ? [leaseMs] : [];
    for (const lease of leases) args.push(lease.id, lease.token);
    const mark = this.scripts.mark;
    const reply = await this.scripts.run<number[]>(action, layout.name, layout.partitions[partition], args);
    if (action === 'ack') {
      // ack.lua ends with 1 when a freed group or concurrency slot woke consumers, then the outbox entries it wrote.
      await this.flows.passOn(layout.name, partition, reply[leases.length + 1] as unknown as string[]);
      return { flags: this.ackFlags(leases, reply, mark), woke: reply[leases.length] === 1 };
    }
    // extend.lua answers the new deadline first, which heartbeats keep on the message.
    const first = action === 'extend' ? 1 : 0;
    const flags = leases.map((lease, k) => {
      const held = reply[first + k] === 1;
      if (held && action === 'extend') lease.leaseDeadline = reply[0];
      return held;
    });
    return { flags, woke: action === 'release' && flags.includes(true) };
  }

  /**
   * ack.lua's flags as acked or not. "Already gone" (2) counts as acked only when a
   * connection dropped while the call was out and the lease was still live: then it was this
   * very ack, resent by ioredis after its reply was lost. Otherwise nothing was acked: the
   * id was never there (or belongs to another topic).
   */
  ackFlags(leases: HeldLease[], flags: number[], mark: number): boolean[] {
    const resent = this.scripts.droppedSince(mark);
    const serverNow = Date.now() + this.serverOffsetMs;
    return leases.map(
      (lease, i) => flags[i] === 1 || (flags[i] === 2 && resent && (lease.leaseDeadline ?? 0) > serverNow),
    );
  }
}
