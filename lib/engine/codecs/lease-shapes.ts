import type { Lease } from './wire-format';

/**
 * The shapes of leases as the engine's stores take them and answer about them; the consumer's
 * contract (consumer-engine.ts) is written in them too.
 */

/** A lease to settle; `leaseDeadline` (server clock) tells a resent ack from a stale one. */
export interface HeldLease extends Lease {
  leaseDeadline?: number;
}

export type SettleAction = 'ack' | 'extend' | 'release';

/** `deferred`: back to delayed, attempt not counted; `over`: deferred too often, nothing changed; `lost`: stale lease. */
export type DeferResult = 'deferred' | 'over' | 'lost';

/** How a topic keeps its completed messages (`keepCompleted`), with every bound filled in. */
export interface CompletedPolicy {
  maxCount: number;
  maxAgeMs: number;
  /** Largest result kept, as JSON bytes (the service's maxPayloadBytes). */
  maxResultBytes: number;
}

/**
 * How storing a durable step ended: `stored`; `kept`, the name held a result already, and
 * `json` is it (the first stays); `lost`, the lease is no longer this one; `full`, the message
 * holds the most steps it may. Nothing changed unless `stored`.
 */
export type StepStoreResult =
  { outcome: 'stored' } | { outcome: 'kept'; json: string } | { outcome: 'lost' } | { outcome: 'full' };

/** A lease to complete: `extra` ends its completed record (see completionExtra). */
export interface CompletedLease extends HeldLease {
  extra: string;
}

/**
 * The lease of `message` to complete, with `extra`. It keeps the message's group: on a
 * partitioned topic the group, not the id, chose the partition that holds the lease.
 */
export function completedLease({ id, token, group, leaseDeadline }: HeldLease, extra: string): CompletedLease {
  return { id, token, group, leaseDeadline, extra };
}

/** A flow's parent that went to the dead letters as `child-failed` when it heard of a child's end. */
export interface DeadParent {
  topic: string;
  id: string;
  /** The text its dead letter keeps (which child failed, and why). */
  error: string;
}
