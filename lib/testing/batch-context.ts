import type { BatchContext, BatchMessage } from '../interfaces';
import { runTestStep } from './message-context';

/** One `fail(message, error)` call of a {@link TestBatchContext}. */
export interface BatchFailCall {
  /** The id of the message reported as failed. */
  id: string;
  /** The error it was reported with. */
  error: unknown;
}

/** What a {@link TestBatchContext}'s methods were called with, in call order. */
export interface BatchContextCalls {
  /** The `ms` of each `extendLease(ms)`. */
  readonly extendLease: number[];
  /** Each `fail(message, error)`, with the message's id. */
  readonly fail: BatchFailCall[];
}

/** A full BatchContext for a unit test of a batch handler method, recording its calls. */
export interface TestBatchContext extends BatchContext {
  /** What its methods were called with. */
  readonly calls: BatchContextCalls;
  /** Aborts `signal` with `reason`, as a batch timeout or a shutdown would. */
  abort(reason?: unknown): void;
}

/**
 * A BatchContext for calling a batch handler method directly in a unit test: `topic`
 * `test.topic`, a signal that `abort()` fires, `extendLease` resolving true, `fail` recording
 * the message's id and error. A method given in `overrides` is recorded too, then runs instead.
 * @param overrides - Fields and methods to set instead of the defaults.
 * @example
 * ```ts
 * const context = createBatchContext();
 * await handler.onEvents([createBatchMessage({ n: 1 }), createBatchMessage({ n: -1 })], context);
 * expect(context.calls.fail).toHaveLength(1);
 * ```
 */
export function createBatchContext(overrides: Partial<BatchContext> = {}): TestBatchContext {
  const controller = new AbortController();
  const calls: BatchContextCalls = { extendLease: [], fail: [] };
  const { extendLease, fail, ...fields } = overrides;
  return {
    topic: 'test.topic',
    signal: controller.signal,
    ...fields,
    calls,
    abort: (reason?: unknown) => controller.abort(reason),
    extendLease: (ms) => {
      calls.extendLease.push(ms);
      return extendLease ? extendLease(ms) : Promise.resolve(true);
    },
    fail: (message, error) => {
      calls.fail.push({ id: typeof message === 'string' ? message : message.id, error });
      fail?.(message, error);
    },
  };
}

let made = 0;

/** One message of a batch for a unit test, with the durable steps its `step` stored. */
export interface TestBatchMessage<T> extends BatchMessage<T> {
  /**
   * The durable steps stored so far, name -> result (as JSON gives it back), kept in memory:
   * pass the same message again to test a redelivery, or fill it in first.
   */
  readonly steps: Map<string, unknown>;
}

/**
 * One message of a batch for a unit test: `payload` with `id` `test-batch-message-<n>`,
 * `attempt` 1, `maxAttempts` 5, `headers` `{}`, `enqueuedAt` now, no group, a signal of its own
 * that never aborts unless one is given, and a `step` that keeps its results in `steps` (as
 * `createMessageContext`'s does; topic `test.topic`).
 * @param payload - The message's payload.
 * @param overrides - Fields to set instead of the defaults.
 */
export function createBatchMessage<T>(
  payload: T,
  overrides: Partial<Omit<BatchMessage<T>, 'payload'>> = {},
): TestBatchMessage<T> {
  const steps = new Map<string, unknown>();
  const message: TestBatchMessage<T> = {
    id: `test-batch-message-${++made}`,
    attempt: 1,
    maxAttempts: 5,
    headers: {},
    enqueuedAt: Date.now(),
    group: undefined,
    signal: new AbortController().signal,
    step: (name, fn) => runTestStep({ topic: 'test.topic', id: message.id, signal: message.signal }, steps, name, fn),
    ...overrides,
    payload,
    steps,
  };
  return message;
}
