import type { ReservedMessage } from '../interfaces';

/** What `acked`, `retried` and `dead` events say of a delivery's timing (see RedisAckQueueEvent). */
export interface DeliveryTimings {
  durationMs?: number;
  waitMs?: number;
}

/**
 * Ms from when the delivery became due to the reserve that leased it, both on the server's
 * clock: from its retry's due time (`dueAt`), else from the push on a first delivery. The
 * reserve's time is its lease deadline less the lease length (read before any heartbeat
 * extends it). Undefined on a later attempt leased by an older version (no `dueAt`).
 */
export function deliveryWaitMs(message: ReservedMessage<unknown>, leaseMs: number): number | undefined {
  const since = message.dueAt ?? (message.attempt === 1 ? message.enqueuedAt : undefined);
  if (since === undefined) return undefined;
  return Math.max(0, message.leaseDeadline - leaseMs - since);
}
