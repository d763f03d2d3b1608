/** Per-message options of `push`. */
export interface PushOptions {
  /** Your id for the message; a second push with an id that still exists is a duplicate. */
  id?: string;
  /** Deliver no earlier than this many ms from now (server clock). */
  delayMs?: number;
  /** Deliver no earlier than this moment. */
  availableAt?: Date | number;
  /** Deliveries allowed for this message, overriding the consumer's setting. */
  maxAttempts?: number;
  /** String metadata carried with the message (trace ids, origin...). */
  headers?: Record<string, string>;
}

/** One item of `pushMany`. */
export interface PushManyItem<T = unknown> extends PushOptions {
  payload: T;
}

export interface PushResult {
  id: string;
  /** True when a message with this id already existed; nothing was changed then. */
  duplicate: boolean;
}

/** A message as a consumer receives it; all times are epoch ms on the Redis server's clock. */
export interface QueueMessage<T = unknown> {
  id: string;
  topic: string;
  payload: T;
  headers: Record<string, string>;
  /** 1 on the first delivery, counting every reserve (crashed deliveries too). */
  attempt: number;
  maxAttempts: number;
  enqueuedAt: number;
}

/** A message under lease: `token` proves the lease to ack, nack and extendLease. */
export interface ReservedMessage<T = unknown> extends QueueMessage<T> {
  token: string;
  leaseDeadline: number;
}

export interface ReserveOptions {
  /** Most messages to lease (1-1000). Default 1. */
  count?: number;
  /** Lease length (ms). Default: the service's leaseMs. */
  leaseMs?: number;
  /** Attempts allowed for messages that carry no maxAttempts. Default: the service's. */
  maxAttempts?: number;
}

export interface NackOptions {
  /** Wait before the next attempt (ms); default: the backoff for this attempt. */
  delayMs?: number;
  /** What went wrong; kept with the dead letter after the last attempt. */
  error?: unknown;
}

/** `retry`: it will be delivered again; `dead`: no attempts left; `lost`: the lease was stale. */
export type NackResult = 'retry' | 'dead' | 'lost';

export interface QueueStats {
  ready: number;
  delayed: number;
  leased: number;
  dead: number;
}

/**
 * Why a message went to the dead letters: `failed` (the handler failed on its last attempt),
 * `expired` (its last lease ran out), `malformed` (its stored body could not be read), or
 * `rejected` (refused without a retry: a guard or pipe refused it, or the handler threw
 * MessageRejectedError).
 */
export type DeadLetterReason = 'failed' | 'expired' | 'malformed' | 'rejected';

export interface DeadLetter<T = unknown> {
  id: string;
  topic: string;
  /** Why it died; `unknown` only for a record written by something other than this library. */
  reason: DeadLetterReason | 'unknown';
  /** The error text of the last failure. */
  error: string | null;
  attempt: number;
  deadAt: number;
  /** Undefined when the stored body was missing or unreadable. */
  payload: T | undefined;
  headers: Record<string, string>;
  enqueuedAt: number | undefined;
}
