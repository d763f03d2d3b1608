import type { ChildResults, FailedChild } from './queue-flow-api.interface';
import type { QueueHandlerDefaults } from './redis-ack-queue-options.interface';
import type { TopicLimits } from './topic-limits.interface';

/** What a handler gets besides the payload. */
export interface MessageContext {
  /** The message's id. */
  id: string;
  /** The topic it was pushed to. */
  topic: string;
  /** This delivery's number: 1 on the first, counting every reserve (crashed deliveries too). */
  attempt: number;
  /** Deliveries allowed: the message's own `maxAttempts`, else the consumer's. */
  maxAttempts: number;
  /** String metadata given at push (`{}` when none). */
  headers: Record<string, string>;
  /** When it was pushed (epoch ms, Redis server clock). */
  enqueuedAt: number;
  /** Its ordered group (`push` option `group`); undefined when it has none. */
  group: string | undefined;
  /**
   * Aborted when the handler times out, the lease is lost, the message is cancelled (reason:
   * MessageCancelledError), or shutdown's `drainMs` runs out.
   */
  signal: AbortSignal;
  /**
   * Moves the lease deadline to now + ms; false when the lease was already lost.
   * @throws {InvalidOptionError} when `ms` is not a whole number from 10 to 2^31-1.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot
   *   be reached, refuses the call, or holds a foreign value under a queue key.
   */
  extendLease(ms: number): Promise<boolean>;
  /**
   * Ends this delivery and has the message delivered again after `delayMs`, without counting
   * the attempt (the next delivery has the same `attempt`): throws a `RetryLaterError`,
   * so the handler stops here; the deferral holds even if the handler catches it. Past
   * `maxDeferrals` deferrals of one message, it counts as a failed attempt.
   * @throws {RetryLaterError} always: the request itself.
   * @throws {InvalidOptionError} when `delayMs` is not a whole number from 0 to 2^31-1.
   */
  retryLater(delayMs: number): never;
  /**
   * A downstream service refused for its rate limit (an HTTP 429): ends this delivery as
   * `retryLater(delayMs)` does (no attempt counted), and holds the message's ordered group, or
   * the topic when it has none, for every consumer for `delayMs`: throws a `RateLimitedError`.
   * On a partitioned topic, a topic hold covers the message's partition.
   * @throws {RateLimitedError} always: the request itself.
   * @throws {InvalidOptionError} when `delayMs` is not a whole number from 0 to 2^31-1.
   */
  rateLimited(delayMs: number): never;
  /**
   * Reports how far the handler got: any small JSON value (at most 4 KiB), stored on the
   * leased message (`get` shows it as `progress`) while this delivery still holds its lease,
   * and announced by a `progress` event (without the value). Writes are throttled: at most
   * one per message every 200 ms, the latest value wins and is written at the end of the
   * interval, so calling it in a tight loop is cheap. A value still waiting when the handler
   * settles is dropped (an acked message's progress is gone with its lease).
   * @throws {InvalidProgressError} when `value` is not JSON data or its JSON is over 4 KiB.
   */
  progress(value: unknown): void;
  /**
   * Of a flow's parent (`pushFlow`): what each child's handler returned, by child topic and then
   * child id (`results['pdf.render']['page-1']`), read before this handler started. A child that
   * returned nothing (or a value JSON cannot keep) is there as undefined; children that failed
   * are not (see `failedChildren`). `{}` for a message without children.
   */
  childResults(): ChildResults;
  /**
   * Of a flow's parent: its children that went to the dead letters or were cancelled (with
   * `onChildFailure: 'continue'`, or any, when the parent was requeued by hand). `[]` when none.
   */
  failedChildren(): FailedChild[];
  /**
   * A durable step: runs `fn` once per message and stores its result with the message, so a
   * later delivery of the same message (after a crash, a lease expiry, a failed attempt or a
   * `retryLater`) gets the stored result back without running `fn` again. The result is JSON
   * data of at most 64 KiB, or undefined; every delivery, the first included, gets it as JSON
   * gives it back (a Date as its ISO text). Steps stay while the message lives (a dead letter
   * keeps them, and a requeue resumes from them), are kept with its completed record
   * (`keepCompleted`), and go with it; `get` shows them as `steps`.
   *
   * Only this delivery's lease may store a step: a delivery whose lease expired (the message may
   * run elsewhere) stores nothing and fails with `LeaseLostError`. `fn` itself runs at least
   * once, not exactly once: if the process dies after `fn` and before its result is stored, the
   * next delivery runs it again, so make its side effects idempotent (an idempotency key built
   * from the message id and the step name). Name steps by what they do, never by data that varies
   * between deliveries. A second call of a name in one delivery shares the first's result.
   * @param name - The step's name within this message: 1-256 characters.
   * @param fn - The work; its result (or the value its promise resolves to) is what is stored.
   * @returns The step's result: stored now, or by an earlier delivery.
   * @throws {InvalidOptionError} when `name` is not a string of 1-256 characters or `fn` is not
   *   a function (nothing runs).
   * @throws {InvalidStepResultError} when the result is not JSON data or its JSON is over 64 KiB
   *   (nothing is stored), or the message holds 100 steps already (`fn` does not run).
   * @throws {LeaseLostError} when this delivery's lease is gone (expired, or the message
   *   acked elsewhere): nothing is stored; the handler should stop, its outcome no longer counts.
   * @throws {MessageCancelledError | ConsumerShutdownError} when the message was cancelled, or the
   *   consumer's shutdown released it, before the step started (`fn` does not run).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot
   *   be reached, refuses the call, or holds a foreign value under a queue key.
   * @throws whatever `fn` throws (nothing is stored; a later delivery runs it again).
   * @example
   * ```ts
   * const charge = await context.step('charge', () => payments.charge(order, { idempotencyKey: context.id }));
   * await context.step('email', () => mailer.sendReceipt(order, charge.id));
   * ```
   */
  step<R>(name: string, fn: () => R | Promise<R>): Promise<R>;
}

/**
 * A message handler: the message is acked when it returns (or its promise resolves), and
 * nacked with the error when it throws (or rejects): retried after the backoff while
 * attempts remain, dead otherwise.
 */
export type QueueHandlerFn<T = unknown> = (payload: T, context: MessageContext) => unknown;

/**
 * Options of `@QueueHandler()` and `service.consume()`; unset ones come from the module. Limits
 * given here are written to Redis when the consumer starts, for the whole fleet.
 */
export type QueueHandlerOptions = QueueHandlerDefaults &
  TopicLimits & {
    /**
     * Hand the handler its messages in batches: `(messages, context)` (see {@link BatchOptions});
     * `concurrency` then counts batch calls.
     */
    batch?: BatchOptions;
  };

/** A running consumer, as returned by `service.consume()`. */
export interface QueueConsumer {
  /** The topic it consumes. */
  readonly topic: string;
  /** Number of handlers running now. */
  readonly running: number;
  /**
   * Stops reserving, waits up to drainMs for running handlers, releases the rest (back to
   * ready at once, the attempt not counted). `drainMs` defaults to the service's `drainMs`.
   */
  close(drainMs?: number): Promise<void>;
}

/** What a health check sees of one running consumer (`service.consumerLiveness()`). */
export interface ConsumerLiveness {
  /** The topic it consumes. */
  topic: string;
  /**
   * Ms since Redis last answered it: a reserve, ack, nack or lease extension, or its blocking
   * wait (which answers an idle consumer at least every 5 s).
   */
  msSinceAnswer: number;
  /**
   * The longest time (ms) its process went without running timers within the last minute,
   * beyond their period: a blocked event loop (a synchronous handler) shows here.
   */
  longestTickGapMs: number;
}

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

/**
 * A value named like the interface {@link MessageContext}, so that a plain `import { MessageContext }` works in a decorated
 * signature under `isolatedModules` with `emitDecoratorMetadata` (as `nest new` sets them), where an
 * interface alone needs `import type`. TypeScript records the parameter as `Object`, as for any
 * interface; nothing is an instance of this marker.
 */
export const MessageContext: unique symbol = Symbol('nestjs-redis-ack-queue:MessageContext');
