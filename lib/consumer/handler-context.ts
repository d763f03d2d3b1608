import { isObservable, lastValueFrom } from 'rxjs';
import { HandlerTimeoutError, RateLimitedError, RetryLaterError } from '../errors';
import type {
  ChildResults,
  FailedChild,
  FlowChildInfo,
  MessageContext,
  QueueHandlerFn,
  ReservedMessage,
} from '../interfaces';
import type { FlowChildRecord } from '../engine/codecs/flow-format';
import { userKeyed } from '../common/user-keyed';
import { assertBounded } from '../queue/validation';
import { registerHeldDeliveryReader } from '../queue/queue-internals';

/** What a context needs of the running message it belongs to. */
export interface ContextTarget {
  message: ReservedMessage<unknown>;
  /** Made on first use: most handlers never look at their signal. */
  controller: AbortController | undefined;
  /** Set by `retryLater`: the delivery ends deferred, whatever the handler does next. */
  deferral?: RetryLaterError | RateLimitedError;
  /** Of a flow's parent: its children and how each ended, read before its handler started. */
  children?: FlowChildRecord[];
  /** Made at the handler's first `step` (see DeliverySteps): most handlers never take one. */
  steps?: StepCache;
}

/** What one delivery knows of its message's durable steps. */
export interface StepCache {
  /** The steps stored before this delivery's first step, read once then (name -> result JSON). */
  stored: Promise<Map<string, string>>;
  /** The steps of this delivery running now, by name: a second call of a name shares the first's. */
  running: Map<string, Promise<unknown>>;
}

/**
 * What a context may do to its own message's lease, given when it is built: one object per
 * consumer, shared by its contexts (no closure per message), each call naming its target.
 */
export interface LeaseControls {
  /** Extends the lease to now + ms; false (and the lease reported lost) once it is gone. */
  extend(target: ContextTarget, ms: number): Promise<boolean>;
  /** Reports progress (see ProgressReporter). */
  progress: ReportProgress;
  /** Runs a durable step (see DeliverySteps). */
  step: RunStep;
}

/** A handler's second argument: one object per message, its accessors on the prototype. */
export class HandlerContext implements MessageContext {
  readonly id: string;
  readonly topic: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly headers: Record<string, string>;
  readonly enqueuedAt: number;
  readonly group: string | undefined;
  readonly #target: ContextTarget;
  readonly #lease: LeaseControls;

  constructor(target: ContextTarget, lease: LeaseControls) {
    const { message } = target;
    this.id = message.id;
    this.topic = message.topic;
    this.attempt = message.attempt;
    this.maxAttempts = message.maxAttempts;
    this.headers = message.headers;
    this.enqueuedAt = message.enqueuedAt;
    this.group = message.group;
    this.#target = target;
    this.#lease = lease;
  }

  get signal(): AbortSignal {
    return (this.#target.controller ??= new AbortController()).signal;
  }

  async extendLease(ms: number): Promise<boolean> {
    assertBounded('leaseMs', ms);
    return this.#lease.extend(this.#target, ms);
  }

  retryLater(delayMs: number): never {
    throw (this.#target.deferral = new RetryLaterError(delayMs));
  }

  rateLimited(delayMs: number): never {
    throw (this.#target.deferral = new RateLimitedError(delayMs));
  }

  progress(value: unknown): void {
    this.#lease.progress(this.#target, value);
  }

  childResults(): ChildResults {
    return childResultsOf(this.#target.children);
  }

  failedChildren(): FailedChild[] {
    return failedChildrenOf(this.#target.children);
  }

  step<R>(name: string, fn: () => R | Promise<R>): Promise<R> {
    return this.#lease.step(this.#target, name, fn);
  }

  static {
    // This delivery, for the package's own transport (see queue-internals): no key on the context.
    registerHeldDeliveryReader((context) => {
      if (!(#target in context)) return undefined;
      const { message, deferral } = context.#target;
      return { id: message.id, token: message.token, group: message.group, deferred: deferral !== undefined };
    });
  }
}

/** Children's results by topic, then id (what `childResults` answers), in objects without a prototype. */
export function childResultsOf(children: readonly FlowChildInfo[] | undefined): ChildResults {
  const results: ChildResults = userKeyed();
  for (const { topic, id, outcome, result } of children ?? []) {
    if (outcome === 'acked') (results[topic] ??= userKeyed())[id] = result;
  }
  return results;
}

/** The children that failed (what `failedChildren` answers). */
export function failedChildrenOf(children: readonly FlowChildInfo[] | undefined): FailedChild[] {
  return (children ?? []).flatMap(({ topic, id, outcome, failure }) =>
    outcome === 'failed'
      ? [
          {
            topic,
            id,
            reason: failure?.reason ?? 'unknown',
            ...(failure?.error !== undefined && { error: failure.error }),
          },
        ]
      : [],
  );
}

/** What a context's `progress` does (see ProgressReporter). */
export type ReportProgress = (target: ContextTarget, value: unknown) => void;

/** What a context's `step` does (see DeliverySteps). */
export type RunStep = <R>(target: ContextTarget, name: string, fn: () => R | Promise<R>) => Promise<R>;

/** Aborts the handler's signal (making its controller if the handler never asked for it). */
export function abortHandler(target: ContextTarget, reason: Error): void {
  (target.controller ??= new AbortController()).abort(reason);
}

/** Fails `work` with a HandlerTimeoutError (and aborts the handler's signal) after `timeoutMs`. */
export function withTimeout(target: ContextTarget, work: Promise<unknown>, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = new HandlerTimeoutError(timeoutMs);
      abortHandler(target, error);
      reject(error);
    }, timeoutMs);
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * Calls a handler and returns its outcome as a promise. An Observable succeeds when it
 * completes (with or without values) and fails when it errors; a synchronous throw counts as
 * a rejection, with the thrown value as it is (a custom backoff sees what the handler threw).
 */
export function invokeHandler<T>(handler: QueueHandlerFn<T>, payload: T, context: MessageContext): Promise<unknown> {
  try {
    const result = handler(payload, context);
    return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : Promise.resolve(result);
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see above
    return Promise.reject(error);
  }
}
