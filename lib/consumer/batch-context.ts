import { InvalidOptionError, LeaseLostError, MessageCancelledError } from '../errors';
import type { BatchContext, BatchMessage, MessageContext } from '../interfaces';

/** A message collected for a batch: its single-message context, and how its delivery ends. */
export interface BatchEntry {
  payload: unknown;
  context: MessageContext;
  resolve(): void;
  reject(error: unknown): void;
}

/** The batch handler's view of one message. */
export function batchMessage({ payload, context }: BatchEntry): BatchMessage<unknown> {
  return new RunBatchMessage(payload, context);
}

/** One message of a running batch: its fields, and `step` on the prototype, run by its own context. */
class RunBatchMessage implements BatchMessage<unknown> {
  readonly id: string;
  readonly payload: unknown;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly headers: Record<string, string>;
  readonly enqueuedAt: number;
  readonly group: string | undefined;
  readonly signal: AbortSignal;
  readonly #context: MessageContext;

  constructor(payload: unknown, context: MessageContext) {
    this.id = context.id;
    this.payload = payload;
    this.attempt = context.attempt;
    this.maxAttempts = context.maxAttempts;
    this.headers = context.headers;
    this.enqueuedAt = context.enqueuedAt;
    this.group = context.group;
    this.signal = context.signal;
    this.#context = context;
  }

  step<R>(name: string, fn: () => R | Promise<R>): Promise<R> {
    return this.#context.step(name, fn);
  }
}

/**
 * A batch handler's second argument. Its signal aborts when one message's delivery aborts for
 * the batch as a whole (a timeout, a shutdown's drain running out), not for one message's own
 * cancel or lost lease; `fail` records the messages to retry instead of ack.
 */
export class BatchRunContext implements BatchContext {
  readonly topic: string;
  readonly failures = new Map<string, unknown>();
  private readonly controller = new AbortController();
  private readonly ids: Set<string>;

  constructor(private readonly entries: BatchEntry[]) {
    this.topic = entries[0].context.topic;
    this.ids = new Set(entries.map((entry) => entry.context.id));
    for (const { context } of entries) {
      context.signal.addEventListener('abort', () => {
        const reason: unknown = context.signal.reason;
        if (!(reason instanceof MessageCancelledError || reason instanceof LeaseLostError)) {
          this.controller.abort(reason);
        }
      });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async extendLease(ms: number): Promise<boolean> {
    const held = await Promise.all(this.entries.map(({ context }) => context.extendLease(ms)));
    return held.every(Boolean);
  }

  fail(message: BatchMessage<unknown> | string, error: unknown): void {
    const id = typeof message === 'string' ? message : message?.id;
    if (!this.ids.has(id)) throw new InvalidOptionError('message', id, 'a message of this batch (or its id)');
    this.failures.set(id, error);
  }
}
