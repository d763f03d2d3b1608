import type { QueueHandlerDefaults } from './redis-ack-queue-options.interface';

/** What a handler gets besides the payload. */
export interface MessageContext {
  id: string;
  topic: string;
  attempt: number;
  maxAttempts: number;
  headers: Record<string, string>;
  enqueuedAt: number;
  /** Aborted when the handler times out, the lease is lost, or the app shuts down. */
  signal: AbortSignal;
  /** Moves the lease deadline to now + ms; false when the lease was already lost. */
  extendLease(ms: number): Promise<boolean>;
}

export type QueueHandlerFn<T = unknown> = (payload: T, context: MessageContext) => unknown;

/** Options of `@QueueHandler()` and `service.consume()`; unset ones come from the module. */
export type QueueHandlerOptions = QueueHandlerDefaults;

/** A running consumer, as returned by `service.consume()`. */
export interface QueueConsumer {
  readonly topic: string;
  /** Number of handlers running now. */
  readonly running: number;
  /** Stops reserving, waits up to drainMs for running handlers, releases the rest. */
  close(drainMs?: number): Promise<void>;
}
