import { LIMITS } from '../../common/redis-ack-queue.constants';
import type { CompletedLease, CompletedPolicy, DeferResult, HeldLease, StepStoreResult } from '../codecs/lease-shapes';
import type { LeaseSettler } from './lease-settler';
import type { FlowEnds } from './flow-trees';
import type { ScriptRunner } from '../scripts/script-runner';
import { byPartition, partitionOfMessage, type TopicLayouts } from '../scripts/topic-layouts';

/**
 * What job control writes of a held lease: the completed records of topics that keep them
 * (complete.lua, an ack that keeps the message's id and result), progress (progress.lua),
 * deferrals (defer.lua, retry later without an attempt) and durable steps (step.lua; read back
 * with steps-read.lua). All writes are fenced by the lease's token.
 */
const DEFER_RESULTS: DeferResult[] = ['lost', 'deferred', 'lost', 'over'];

export class JobRecords {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly settler: LeaseSettler,
    private readonly policyOf: (topic: string) => CompletedPolicy | undefined,
    private readonly flows: FlowEnds,
  ) {}

  /**
   * Acks leases with complete.lua: of a topic that keeps completed messages, storing each
   * one's record; of another, deleting them with their progress. At most 500 per script call
   * (per partition). One flag per lease, as ack's: true where it was held. A flow's child hands
   * its result to its parent (passed on before this resolves).
   */
  async complete(topic: string, leases: CompletedLease[]): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    const policy = this.policyOf(topic) ?? { maxCount: 0, maxAgeMs: 0 };
    const flags = new Array<boolean>(leases.length);
    const calls: Promise<void>[] = [];
    let woke = false;
    for (const [partition, positions] of byPartition(layout, leases)) {
      for (let start = 0; start < positions.length; start += LIMITS.idsPerCall) {
        const batch = positions.slice(start, start + LIMITS.idsPerCall);
        const args: (string | number)[] = [policy.maxCount, policy.maxAgeMs];
        for (const i of batch) args.push(leases[i].id, leases[i].token, leases[i].extra);
        const mark = this.scripts.mark;
        calls.push(
          this.scripts.run<number[]>('complete', topic, layout.partitions[partition], args).then(async (reply) => {
            // Then the outbox entries it wrote.
            await this.flows.passOn(topic, partition, reply[batch.length + 1] as unknown as string[]);
            const held = this.settler.ackFlags(
              batch.map((i) => leases[i]),
              reply,
              mark,
            );
            batch.forEach((position, k) => (flags[position] = held[k]));
            // complete.lua ends with 1 when a freed group or concurrency slot woke consumers.
            woke ||= reply[batch.length] === 1;
          }),
        );
      }
    }
    await Promise.all(calls);
    if (woke) await this.scripts.wakeHome(layout);
    return flags;
  }

  /** Stores a lease's progress value (JSON text); false when the lease is no longer this one. */
  async progress(topic: string, lease: HeldLease, json: string): Promise<boolean> {
    const layout = this.layouts.get(topic);
    const [[partition]] = byPartition(layout, [lease]);
    const reply = await this.scripts.run<number>('progress', topic, layout.partitions[partition], [
      lease.id,
      lease.token,
      json,
    ]);
    return reply === 1;
  }

  /**
   * The durable steps the message stored so far: step name -> result JSON ('' for undefined);
   * undefined when the lease is no longer this one.
   */
  async readSteps(topic: string, lease: HeldLease): Promise<Map<string, string> | undefined> {
    const layout = this.layouts.get(topic);
    const keys = layout.partitions[partitionOfMessage(layout, lease)];
    const reply = await this.scripts.run<string[] | null>('stepsRead', topic, keys, [lease.id, lease.token]);
    if (!reply) return undefined;
    const steps = new Map<string, string>();
    for (let i = 0; i < reply.length; i += 2) steps.set(reply[i], reply[i + 1]);
    return steps;
  }

  /** Stores one durable step's result (JSON text, '' for undefined) while the lease is this one. */
  async storeStep(topic: string, lease: HeldLease, name: string, json: string): Promise<StepStoreResult> {
    const layout = this.layouts.get(topic);
    const keys = layout.partitions[partitionOfMessage(layout, lease)];
    const args = [lease.id, lease.token, name, json, LIMITS.maxSteps];
    const [code, kept] = await this.scripts.run<[number, string?]>('step', topic, keys, args);
    if (code === 1) return { outcome: 'stored' };
    if (code === 2) return { outcome: 'kept', json: kept ?? '' };
    return { outcome: code === 3 ? 'full' : 'lost' };
  }

  /**
   * Ends a lease without counting its attempt: the message waits delayMs in delayed. 'over'
   * when it was deferred maxDeferrals times already (nothing changed: the caller nacks). With
   * `hold` (rateLimited), its group, or the topic's partition, starts nothing for delayMs either.
   */
  async defer(
    topic: string,
    lease: HeldLease,
    delayMs: number,
    maxDeferrals: number,
    hold = false,
  ): Promise<DeferResult> {
    const layout = this.layouts.get(topic);
    const keys = layout.partitions[partitionOfMessage(layout, lease)];
    const args = [lease.id, lease.token, Math.ceil(delayMs), maxDeferrals, hold ? 1 : 0];
    const result = DEFER_RESULTS[await this.scripts.run<number>('defer', topic, keys, args)];
    if (result === 'deferred') await this.scripts.wakeHome(layout);
    return result;
  }
}
