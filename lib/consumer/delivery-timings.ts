import type { ReservedMessage } from '../interfaces';

/** What `acked`, `retried` and `dead` events say of a delivery's timing (see RedisAckQueueEvent). */
export interface DeliveryTimings {
  durationMs?: number;
  waitMs?: number;
}

/**
 * Ms from the push to the reserve of a first delivery, both on the server's clock: the
 * reserve's time is its lease deadline less the lease length (read before any heartbeat
 * extends it). Undefined on later attempts, whose due time the reply does not carry.
 */
export function firstWaitMs(message: ReservedMessage<unknown>, leaseMs: number): number | undefined {
  if (message.attempt !== 1) return undefined;
  return Math.max(0, message.leaseDeadline - leaseMs - message.enqueuedAt);
}
