import type { MessageContext } from './consumer.interface';

/**
 * One message of a batch: what a single handler's payload and `MessageContext` carry of it. Its
 * `signal` aborts when this message is cancelled, its lease is lost, or its delivery times out;
 * its `step` is that message's own durable step (see `MessageContext.step`).
 */
export interface BatchMessage<T = unknown> extends Pick<
  MessageContext,
  'id' | 'attempt' | 'maxAttempts' | 'headers' | 'enqueuedAt' | 'group' | 'signal' | 'step'
> {
  /** The payload, as JSON gave it back. */
  payload: T;
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

/**
 * A value named like the interface {@link BatchMessage}, so that a plain `import { BatchMessage }` works in a decorated
 * signature under `isolatedModules` with `emitDecoratorMetadata` (as `nest new` sets them), where an
 * interface alone needs `import type`. TypeScript records the parameter as `Object`, as for any
 * interface; nothing is an instance of this marker.
 */
export const BatchMessage: unique symbol = Symbol('nestjs-redis-ack-queue:BatchMessage');

/**
 * A value named like the interface {@link BatchContext}, so that a plain `import { BatchContext }` works in a decorated
 * signature under `isolatedModules` with `emitDecoratorMetadata` (as `nest new` sets them), where an
 * interface alone needs `import type`. TypeScript records the parameter as `Object`, as for any
 * interface; nothing is an instance of this marker.
 */
export const BatchContext: unique symbol = Symbol('nestjs-redis-ack-queue:BatchContext');
