import type { DeadLetterReason, NackResult, ReservedMessage } from '../interfaces';
import type { ConsumerFlows } from './stores/flow-trees';
import type { ExpiredMessage } from './codecs/wire-format';
import type {
  CompletedLease,
  CompletedPolicy,
  DeferResult,
  HeldLease,
  SettleAction,
  StepStoreResult,
} from './codecs/lease-shapes';

export type { ConsumerFlows } from './stores/flow-trees';
export type { ExpiredMessage } from './codecs/wire-format';
export {
  completedLease,
  type CompletedLease,
  type CompletedPolicy,
  type DeadParent,
  type DeferResult,
  type HeldLease,
  type SettleAction,
  type StepStoreResult,
} from './codecs/lease-shapes';

export interface ReserveRequest {
  /** Messages to lease at most. */
  count: number;
  leaseMs: number;
  /** For messages that carry no maxAttempts of their own. */
  maxAttempts: number;
  /** The consumer's first reserve after a wait, alone: sent at once when it can be (see ScriptRunner.run). */
  afterWait?: boolean;
}

export interface ReserveResult<T> {
  messages: ReservedMessage<T>[];
  /** Ms until something becomes ready without a push; -1 when nothing is scheduled (or paused). */
  nextDueInMs: number;
  /** The topic is paused: nothing was leased, and nothing will be until a resume wakes the consumer. */
  paused: boolean;
  /**
   * A rate limit or a group quota is set: each message leased counts as started at the reserve, so the consumer
   * starts it at once and keeps none waiting for a slot (its handler would start late).
   */
  rateLimited: boolean;
  /** A flow of this partition needs the sweep (see ConsumerFlows.sweep); absent from a fake's answer. */
  flowRepair?: boolean;
  /** One flag per lease acked in the same call: true acked, false not (stale or gone). */
  acked: boolean[];
  /** Leased messages whose bodies could not be read: they went to the dead letters as `malformed`. */
  buried: { id: string; attempt: number }[];
  /**
   * How many the reserve sent to the dead letters in Redis (their last lease had expired, or
   * Redis could not read the body): no event names them, the history counts them.
   */
  deadInRedis: number;
  /**
   * Messages whose start-by deadline passed, ended by this reserve (dead-lettered as `expired`, or
   * dropped) instead of leased; absent from a fake's answer.
   */
  expired?: ExpiredMessage[];
}

/**
 * What a consumer needs of the engine: the poller and the lease keeper depend on this, never
 * on the service, so a shutdown can always hand messages back and a test can pass a fake.
 */
export interface ConsumerEngine {
  partitionCount(topic: string): number;
  /** Acks `acks` (leases of this partition), then leases up to `request.count` messages of it. */
  reserve<T>(topic: string, partition: number, request: ReserveRequest, acks: HeldLease[]): Promise<ReserveResult<T>>;
  /** Acks, extends (to now + leaseMs) or releases leases; one flag per lease, true where it was still held. */
  settle(action: SettleAction, topic: string, leases: HeldLease[], leaseMs?: number): Promise<boolean[]>;
  /** Ends a failed delivery: retry after delayMs while attempts remain, else dead with the error (a flow's parent hears it). */
  nack(
    topic: string,
    lease: HeldLease,
    failure: { delayMs: number; maxAttempts: number; error: unknown },
  ): Promise<NackResult>;
  /** Ends a lease without counting its attempt (retryLater; with `hold`, rateLimited); see DeferResult. */
  defer(topic: string, lease: HeldLease, delayMs: number, maxDeferrals: number, hold?: boolean): Promise<DeferResult>;
  /**
   * Sends leases straight to the dead letters with `reason`, the error's text and the
   * `maxAttempts` that applied (no retry); one flag per lease, false where it was lost.
   */
  bury(
    topic: string,
    leases: HeldLease[],
    reason: DeadLetterReason,
    error: unknown,
    maxAttempts?: number,
  ): Promise<boolean[]>;
  /** How `topic` keeps completed messages; undefined when it keeps none (acks delete). */
  completedPolicy(topic: string): CompletedPolicy | undefined;
  /**
   * Acks leases with complete.lua: kept as completed records where the topic keeps them,
   * else deleted with their progress. One flag per lease.
   */
  complete(topic: string, leases: CompletedLease[]): Promise<boolean[]>;
  /** Stores a lease's progress (JSON text); false when the lease is no longer this one. */
  progress(topic: string, lease: HeldLease, json: string): Promise<boolean>;
  /** The durable steps the message stored so far (step name -> result JSON, '' for undefined); undefined when the lease is no longer this one. */
  readSteps(topic: string, lease: HeldLease): Promise<Map<string, string> | undefined>;
  /** Stores one durable step's result JSON ('' for undefined), fenced by the lease (see StepStoreResult). */
  storeStep(topic: string, lease: HeldLease, name: string, json: string): Promise<StepStoreResult>;
  /**
   * Flows: how large a child's result may be, a parent's children for its handler, and the
   * sweep. The ends of children are passed on by the methods above that end them.
   */
  readonly flows: ConsumerFlows;
}
