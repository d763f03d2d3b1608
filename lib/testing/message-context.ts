import { InvalidOptionError, RateLimitedError, RetryLaterError } from '../errors';
import type { MessageContext } from '../interfaces';
import { LIMITS } from '../common/redis-ack-queue.constants';
import {
  checkStepName,
  decodeStepResult,
  deliveryEnded,
  encodeStepResult,
  tooManySteps,
} from '../consumer/delivery-steps';

/** What a {@link TestMessageContext}'s methods were called with, in call order. */
export interface MessageContextCalls {
  /** The `ms` of each `extendLease(ms)`. */
  readonly extendLease: number[];
  /** The value of each `progress(value)`. */
  readonly progress: unknown[];
  /** The `delayMs` of each `retryLater(delayMs)`. */
  readonly retryLater: number[];
  /** The `delayMs` of each `rateLimited(delayMs)`. */
  readonly rateLimited: number[];
  /** The `name` of each `step(name, fn)`, whether its `fn` ran or its stored result came back. */
  readonly step: string[];
}

/** A full MessageContext for a unit test of a handler method, recording its calls. */
export interface TestMessageContext extends MessageContext {
  /** What its methods were called with. */
  readonly calls: MessageContextCalls;
  /**
   * The durable steps stored so far, name -> result (as JSON gives it back), kept in memory.
   * Call the handler again with the same context to test a redelivery (a stored name returns
   * its result without running `fn`), or fill it in first.
   */
  readonly steps: Map<string, unknown>;
  /**
   * Aborts `signal` with `reason`, as a timeout, a lost lease, a cancel or a shutdown would
   * (only the context's own signal: not one given in the overrides).
   */
  abort(reason?: unknown): void;
}

let made = 0;

/**
 * A MessageContext for calling a handler method directly in a unit test, no Redis involved:
 * `id` `test-message-<n>`, `topic` `test.topic`, `attempt` 1, `maxAttempts` 5, `headers` `{}`,
 * `enqueuedAt` now, no group, no flow children (`childResults()` `{}`, `failedChildren()` `[]`), a
 * signal that `abort()` fires. Its methods record their calls in
 * `calls` and act as the real ones would: `extendLease` resolves true, `progress` does nothing
 * more, `retryLater` and `rateLimited` throw RetryLaterError and RateLimitedError, `step` keeps
 * its results in `steps` (checked as the real one checks them). A method given in `overrides` is
 * recorded too, then runs instead.
 * @param overrides - Fields and methods to set instead of the defaults.
 * @example
 * ```ts
 * const context = createMessageContext({ attempt: 3, headers: { tenant: 'acme' } });
 * await handler.onOrderCreated({ orderId: 'o-1' }, context);
 * expect(context.calls.progress).toEqual([{ step: 'charged' }]);
 * ```
 */
export function createMessageContext(overrides: Partial<MessageContext> = {}): TestMessageContext {
  const controller = new AbortController();
  const calls: MessageContextCalls = { extendLease: [], progress: [], retryLater: [], rateLimited: [], step: [] };
  const { extendLease, progress, retryLater, rateLimited, step, ...fields } = overrides;
  const steps = new Map<string, unknown>();
  const context: TestMessageContext = {
    id: `test-message-${++made}`,
    topic: 'test.topic',
    attempt: 1,
    maxAttempts: 5,
    headers: {},
    enqueuedAt: Date.now(),
    group: undefined,
    signal: controller.signal,
    childResults: () => ({}),
    failedChildren: () => [],
    ...fields,
    calls,
    steps,
    abort: (reason?: unknown) => controller.abort(reason),
    extendLease: (ms) => {
      calls.extendLease.push(ms);
      return extendLease ? extendLease(ms) : Promise.resolve(true);
    },
    progress: (value) => {
      calls.progress.push(value);
      progress?.(value);
    },
    retryLater: (delayMs) => {
      calls.retryLater.push(delayMs);
      if (retryLater) return retryLater(delayMs);
      throw new RetryLaterError(delayMs);
    },
    rateLimited: (delayMs) => {
      calls.rateLimited.push(delayMs);
      if (rateLimited) return rateLimited(delayMs);
      throw new RateLimitedError(delayMs);
    },
    step: <R>(name: string, fn: () => R | Promise<R>) => {
      calls.step.push(name);
      return step ? step(name, fn) : runTestStep(context, steps, name, fn);
    },
  };
  return context;
}

/** A step as the real context runs it, its results kept in `steps` (decoded). */
export async function runTestStep<R>(
  context: Pick<MessageContext, 'topic' | 'id' | 'signal'>,
  steps: Map<string, unknown>,
  name: string,
  fn: () => R | Promise<R>,
): Promise<R> {
  checkStepName(name);
  if (typeof fn !== 'function') throw new InvalidOptionError('step function', fn, 'a function', true);
  if (steps.has(name)) return steps.get(name) as R;
  const ended = deliveryEnded(context.signal);
  if (ended) throw ended;
  if (steps.size >= LIMITS.maxSteps) throw tooManySteps(context.topic, context.id, name);
  const value = decodeStepResult(encodeStepResult(context.topic, context.id, name, await fn()));
  if (!steps.has(name)) steps.set(name, value);
  return steps.get(name) as R;
}
