/** Option `batch` of `@QueueHandler()` and `consume()`: the handler takes messages in batches. */
export interface BatchOptions {
  /** Most messages in one call (1-1,000). */
  maxSize: number;
  /**
   * How long a batch waits for more after its first message arrived (ms, 0-60,000): the call
   * starts once `maxSize` are at hand or this long after the first, whichever comes first.
   */
  maxWaitMs: number;
}

/** One message of a batch: what a single handler's payload and `MessageContext` carry. */
export interface BatchMessage<T = unknown> {
  /** The message's id. */
  id: string;
  /** The payload, as JSON gave it back. */
  payload: T;
  /** This delivery's number: 1 on the first. */
  attempt: number;
  /** Deliveries allowed: the message's own `maxAttempts`, else the consumer's. */
  maxAttempts: number;
  /** String metadata given at push (`{}` when none). */
  headers: Record<string, string>;
  /** When it was pushed (epoch ms, Redis server clock). */
  enqueuedAt: number;
  /** Its ordered group, if any. */
  group: string | undefined;
  /** Aborted when this message is cancelled, its lease is lost, or its delivery times out. */
  signal: AbortSignal;
}

/** What a batch handler gets besides its messages. */
export interface BatchContext {
  /** The topic of every message of the batch. */
  topic: string;
  /**
   * Aborted when the batch call runs past `timeoutMs` or a shutdown's `drainMs` runs out (a
   * single message's cancel or lost lease aborts only that message's `signal`).
   */
  signal: AbortSignal;
  /** Moves the lease deadline of every message of the batch to now + ms; false if one was lost. */
  extendLease(ms: number): Promise<boolean>;
  /**
   * Reports that one message of the batch failed: when the handler resolves, that message is
   * retried after the backoff (or dead-lettered after its last attempt) with `error`, and the
   * others are acked. A `MessageRejectedError` sends it to the dead letters at once.
   * @throws {InvalidOptionError} when `message` (or the id) is not one of this batch's.
   */
  fail(message: BatchMessage<unknown> | string, error: unknown): void;
}

/**
 * A batch handler: every message of the batch is acked when it resolves, except those reported
 * with `context.fail`; when it throws (or rejects) every message fails with that error.
 */
export type QueueBatchHandlerFn<T = unknown> = (messages: BatchMessage<T>[], context: BatchContext) => unknown;
