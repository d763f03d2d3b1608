import { InvalidOptionError } from '../errors';
import { errorText } from '../errors/error-text';
import type { DeadLetterReason, NackResult } from '../interfaces';
import { LIMITS } from '../redis-ack-queue.constants';
import { MESSAGES } from '../redis-ack-queue.messages';
import type { ConsumerEngine, HeldLease, ReserveRequest, ReserveResult, SettleAction } from './consumer-engine';
import { partitionOf } from './partitions';
import type { RedisClient } from './connection';
import { ReplicatedPushes } from './replicated-pushes';
import { ScriptRunner } from './script-runner';
import { byPartition, TopicLayouts, type TopicLayout } from './topic-layouts';
import { decodeReserveReply, type EncodedPush, type Lease } from './wire-format';

/** What the engine needs to know of the settings. */
export interface EngineConfig {
  prefix: string;
  /** Partition count of every topic that has more than one. */
  partitions: ReadonlyMap<string, number>;
  replicatedPushes: { replicas: number; timeoutMs: number } | undefined;
  deadMaxCount: number;
  deadMaxAgeMs: number;
}

const NACK_RESULTS: NackResult[] = ['lost', 'retry', 'dead'];

/**
 * The only code that changes queue state in Redis: one method per script, decoded results,
 * partitions routed by id. It has no "closed" guard and emits no events: the facade and
 * the consumers decide what is allowed and what is reported, so a shutdown can always hand
 * its messages back.
 */
export class QueueEngine implements ConsumerEngine {
  /** Redis server time minus local time, as of the last reserve. */
  private serverOffsetMs = 0;

  readonly scripts: ScriptRunner;
  readonly layouts: TopicLayouts;
  private readonly replicated: ReplicatedPushes | undefined;

  constructor(
    client: RedisClient,
    private readonly config: EngineConfig,
  ) {
    this.scripts = new ScriptRunner(client);
    this.layouts = new TopicLayouts(client, config.prefix, config.partitions);
    const { replicatedPushes: replicated } = config;
    if (replicated) this.replicated = new ReplicatedPushes(client, replicated.replicas, replicated.timeoutMs);
  }

  partitionCount(topic: string): number {
    return this.layouts.get(topic).partitions.length;
  }

  /** Stores messages (in one round trip per partition); one flag per item: true stored, false duplicate. */
  async push(topic: string, items: EncodedPush[]): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'push');
    const stored = new Array<boolean>(items.length);
    let woke = false;
    const groups = byPartition(
      layout,
      items.map(([id]) => ({ id })),
    );
    await Promise.all(
      [...groups].map(async ([partition, positions]) => {
        const flags = await this.pushToPartition(
          layout,
          partition,
          positions.map((i) => items[i]),
        );
        positions.forEach((position, k) => (stored[position] = flags[k] === 1));
        woke ||= flags[positions.length] === 1;
      }),
    );
    if (woke && layout.partitions.length > 1) await this.wakeHome(layout);
    return stored;
  }

  /**
   * One push.lua call per 500 items, sent at once (with replicatedPushes, confirmed by
   * replicas first). Returns push.lua's flag per item, then 1 if consumers were woken.
   */
  private async pushToPartition(layout: TopicLayout, partition: number, items: EncodedPush[]): Promise<number[]> {
    const keys = layout.partitions[partition];
    const chunks: (string | number)[][] = [];
    for (let i = 0; i < items.length; i += LIMITS.pushChunk) chunks.push(items.slice(i, i + LIMITS.pushChunk).flat());
    const replies = this.replicated
      ? await this.replicated.push(
          layout.name,
          keys,
          chunks,
          items.map(([id]) => id),
        )
      : await Promise.all(chunks.map((chunk) => this.scripts.run<number[]>('push', layout.name, keys, chunk)));
    return [...replies.flatMap((reply) => reply.slice(0, -1)), Math.max(...replies.map((reply) => reply.at(-1)!))];
  }

  async reserve<T>(
    topic: string,
    partition: number,
    request: ReserveRequest,
    acks: HeldLease[],
  ): Promise<ReserveResult<T>> {
    if (acks.length > LIMITS.idsPerCall)
      throw new InvalidOptionError('acks', acks.length, `at most ${LIMITS.idsPerCall} leases`);
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'reserve');
    const keys = layout.partitions[partition];
    const { count, leaseMs, maxAttempts } = request;
    const args: (string | number)[] = [
      count,
      leaseMs,
      maxAttempts,
      LIMITS.maxMovesPerReserve,
      this.config.deadMaxCount,
      this.config.deadMaxAgeMs,
    ];
    for (const lease of acks) args.push(lease.id, lease.token);
    const mark = this.scripts.mark;
    const reply = decodeReserveReply<T>(
      topic,
      await this.scripts.run<(string | number)[]>('reserve', topic, keys, args),
      maxAttempts,
    );
    this.serverOffsetMs = reply.serverNow - Date.now();
    const acked = this.ackFlags(acks, reply.ackFlags, mark);
    const flags =
      reply.unreadable.length > 0 ? await this.bury(topic, reply.unreadable, 'malformed', MESSAGES.malformedBody) : [];
    const buried = reply.unreadable.filter((_, i) => flags[i]).map(({ id, attempt }) => ({ id, attempt }));
    // A full batch may leave more behind: let the other consumers, waiting in the home slot,
    // help. At most every 50 ms: one wake is enough for a consumer to try every partition.
    if (layout.partitions.length > 1 && reply.messages.length === count && Date.now() - layout.helpWokenAt > 50) {
      layout.helpWokenAt = Date.now();
      this.wakeHome(layout).catch(() => undefined);
    }
    return { messages: reply.messages, nextDueInMs: reply.nextDueInMs, acked, buried };
  }

  /** Reserves from the partitions in turn (each call starts at the next); the first that has messages answers. */
  async reserveAny<T>(topic: string, request: ReserveRequest): Promise<Omit<ReserveResult<T>, 'acked'>> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'reserve');
    const buried: ReserveResult<T>['buried'] = [];
    for (let tried = 0; tried < layout.partitions.length; tried++) {
      layout.cursor = (layout.cursor + 1) % layout.partitions.length;
      const batch = await this.reserve<T>(topic, layout.cursor, request, []);
      buried.push(...batch.buried);
      if (batch.messages.length > 0) return { ...batch, buried };
    }
    return { messages: [], nextDueInMs: -1, buried };
  }

  /** Sends leased messages straight to the dead letters with `reason`, each while its lease holds; one flag per lease. */
  async bury(topic: string, leases: Lease[], reason: DeadLetterReason, error: unknown): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    const flags: boolean[] = [];
    const head = [reason, errorText(error), this.config.deadMaxCount, this.config.deadMaxAgeMs];
    for (const [partition, positions] of byPartition(layout, leases)) {
      const pairs = positions.flatMap((i) => [leases[i].id, leases[i].token]);
      const reply = await this.scripts.run<number[]>('bury', topic, layout.partitions[partition], [...head, ...pairs]);
      positions.forEach((position, k) => (flags[position] = reply[k] === 1));
    }
    return flags;
  }

  /**
   * Acks, extends or releases leases, at most 500 per script call (per partition), all sent
   * at once. The callers have checked the arguments.
   */
  async settle(action: SettleAction, topic: string, leases: HeldLease[], leaseMs = 0): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    const calls: Promise<void>[] = [];
    const flags = new Array<boolean>(leases.length);
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
            batch.forEach((position, k) => (flags[position] = answers[k]));
          }),
        );
      }
    }
    await (calls.length === 1 ? calls[0] : Promise.all(calls));
    if (action === 'release' && layout.partitions.length > 1 && flags.includes(true)) await this.wakeHome(layout);
    return flags;
  }

  private async settleBatch(
    action: SettleAction,
    layout: TopicLayout,
    partition: number,
    leases: HeldLease[],
    leaseMs: number,
  ) {
    const args: (string | number)[] = action === 'extend' ? [leaseMs] : [];
    for (const lease of leases) args.push(lease.id, lease.token);
    const mark = this.scripts.mark;
    const reply = await this.scripts.run<number[]>(action, layout.name, layout.partitions[partition], args);
    if (action === 'ack') return this.ackFlags(leases, reply, mark);
    // extend.lua answers the new deadline first, which heartbeats keep on the message.
    const first = action === 'extend' ? 1 : 0;
    return leases.map((lease, k) => {
      const held = reply[first + k] === 1;
      if (held && action === 'extend') lease.leaseDeadline = reply[0];
      return held;
    });
  }

  /**
   * ack.lua's flags as acked or not. "Already gone" (2) counts as acked only when a
   * connection dropped while the call was out and the lease was still live: then it was this
   * very ack, resent by ioredis after its reply was lost. Otherwise nothing was acked: the
   * id was never there (or belongs to another topic).
   */
  private ackFlags(leases: HeldLease[], flags: number[], mark: number): boolean[] {
    const resent = this.scripts.droppedSince(mark);
    const serverNow = Date.now() + this.serverOffsetMs;
    return leases.map(
      (lease, i) => flags[i] === 1 || (flags[i] === 2 && resent && (lease.leaseDeadline ?? 0) > serverNow),
    );
  }

  async nack(
    topic: string,
    lease: HeldLease,
    failure: { delayMs: number; maxAttempts: number; error: unknown },
  ): Promise<NackResult> {
    const layout = this.layouts.get(topic);
    const keys = layout.partitions[partitionOf(lease.id, layout.partitions.length)];
    const { deadMaxCount, deadMaxAgeMs } = this.config;
    const args = [
      lease.id,
      lease.token,
      Math.ceil(failure.delayMs),
      failure.maxAttempts,
      errorText(failure.error),
      deadMaxCount,
      deadMaxAgeMs,
    ];
    const result = NACK_RESULTS[await this.scripts.run<number>('nack', topic, keys, args)];
    if (result === 'retry' && layout.partitions.length > 1) await this.wakeHome(layout);
    return result;
  }

  /** Wakes a consumer of a partitioned topic: they wait in the home slot, not the partitions'. */
  async wakeHome(layout: TopicLayout): Promise<void> {
    await this.scripts.run('wake', layout.name, layout.home, []);
  }
}
