import { Injectable } from '@nestjs/common';
import {
  InvalidOptionError,
  InvalidStepResultError,
  type MessageContext,
  QueueHandler,
  RateLimitedError,
  RetryLaterError,
} from '../../lib';
import { createBatchContext, createBatchMessage, createMessageContext } from '../../lib/testing';
import type { BatchContext, BatchMessage } from '../../lib';
import { RedisAckQueueContext } from '../../lib/microservices';

/** A handler class as an app writes it, tested by calling its methods directly. */
@Injectable()
class ImportHandlers {
  @QueueHandler('imports.run')
  async onImport(payload: { rows: number }, context: MessageContext) {
    if (context.headers.paused === 'yes') context.retryLater(5_000);
    if (!(await context.extendLease(60_000))) return 'lost';
    for (let row = 1; row <= payload.rows && !context.signal.aborted; row++) context.progress({ row });
    return `${context.topic}/${context.id} attempt ${context.attempt} of ${context.maxAttempts}`;
  }

  @QueueHandler('events.batch', { batch: { maxSize: 10, maxWaitMs: 100 } })
  async onEvents(messages: BatchMessage<{ n: number }>[], context: BatchContext) {
    await context.extendLease(1_000);
    for (const message of messages) if (message.payload.n < 0) context.fail(message, new Error('negative'));
  }
}

describe('createMessageContext', () => {
  const handlers = new ImportHandlers();

  it('gives every field a default and records what the handler called', async () => {
    const context = createMessageContext();
    expect(context).toMatchObject({ topic: 'test.topic', attempt: 1, maxAttempts: 5, headers: {}, group: undefined });
    expect(context.id).toMatch(/^test-message-\d+$/);
    expect(context.enqueuedAt).toBeLessThanOrEqual(Date.now());
    expect(context.signal.aborted).toBe(false);
    expect(await handlers.onImport({ rows: 2 }, context)).toBe(`test.topic/${context.id} attempt 1 of 5`);
    expect(context.calls).toEqual({
      extendLease: [60_000],
      progress: [{ row: 1 }, { row: 2 }],
      retryLater: [],
      rateLimited: [],
      step: [],
    });
  });

  it('takes overrides of fields and methods (still recording their calls)', async () => {
    const context = createMessageContext({
      id: 'order-7',
      topic: 'imports.run',
      attempt: 3,
      extendLease: () => Promise.resolve(false),
    });
    expect(await handlers.onImport({ rows: 2 }, context)).toBe('lost');
    expect(context.calls.extendLease).toEqual([60_000]);
    expect(context.id).toBe('order-7');
  });

  it('throws RetryLaterError from retryLater and RateLimitedError from rateLimited, as the real context does', async () => {
    const context = createMessageContext({ headers: { paused: 'yes' } });
    await expect(handlers.onImport({ rows: 1 }, context)).rejects.toBeInstanceOf(RetryLaterError);
    expect(context.calls.retryLater).toEqual([5_000]);
    expect(() => context.rateLimited(250)).toThrow(RateLimitedError);
    expect(context.calls.rateLimited).toEqual([250]);
  });

  it('fires its signal on abort()', async () => {
    const context = createMessageContext();
    const reason = new Error('timed out');
    context.abort(reason);
    expect(context.signal.aborted).toBe(true);
    expect(context.signal.reason).toBe(reason);
    await handlers.onImport({ rows: 5 }, context);
    expect(context.calls.progress).toEqual([]);
  });
});

describe('durable steps of the test contexts', () => {
  /** A handler with steps, as an app writes it: charges once, however often the message comes. */
  const charges: string[] = [];
  const onOrder = async (order: { id: string }, context: Pick<MessageContext, 'step'>) => {
    const charge = await context.step('charge', () => (charges.push(order.id), { chargeId: `ch-${order.id}` }));
    await context.step('notify', () => undefined);
    return charge.chargeId;
  };

  it('keeps step results in memory: a second call with the same context runs no step again', async () => {
    charges.length = 0;
    const context = createMessageContext();
    expect(await onOrder({ id: 'o1' }, context)).toBe('ch-o1');
    expect(await onOrder({ id: 'o1' }, context)).toBe('ch-o1');
    expect(charges).toEqual(['o1']);
    expect(context.calls.step).toEqual(['charge', 'notify', 'charge', 'notify']);
    expect([...context.steps]).toEqual([
      ['charge', { chargeId: 'ch-o1' }],
      ['notify', undefined],
    ]);
    // Filled in first: a redelivery after the charge.
    const redelivered = createMessageContext({ attempt: 2 });
    redelivered.steps.set('charge', { chargeId: 'ch-earlier' });
    expect(await onOrder({ id: 'o2' }, redelivered)).toBe('ch-earlier');
    expect(charges).toEqual(['o1']);
  });

  it('checks names and results as the real step does', async () => {
    const context = createMessageContext();
    await expect(context.step('', () => 1)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(context.step('charge-\uD800', () => 1)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(context.step('big', () => 10n)).rejects.toBeInstanceOf(InvalidStepResultError);
    await expect(context.step('large', () => 'x'.repeat(70_000))).rejects.toThrow(/over the limit of 65536/);
    await expect(context.step('date', () => new Date(0))).resolves.toBe('1970-01-01T00:00:00.000Z');
    expect([...context.steps.keys()]).toEqual(['date']);
    const overridden = createMessageContext({ step: () => Promise.resolve('stub') as Promise<never> });
    expect(await overridden.step('any', () => 1)).toBe('stub');
    expect(overridden.calls.step).toEqual(['any']);
  });

  it("runs a step of the transport's context through its message's context", async () => {
    const message = createMessageContext();
    const context = new RedisAckQueueContext([message, 'orders.placed']);
    expect(await context.step('once', () => 1)).toBe(1);
    expect(await context.step('once', () => 2)).toBe(1);
    expect(message.calls.step).toEqual(['once', 'once']);
  });

  it('gives each batch message its own steps', async () => {
    charges.length = 0;
    const first = createBatchMessage({ id: 'b1' });
    const second = createBatchMessage({ id: 'b2' });
    for (const message of [first, second, first]) await onOrder(message.payload, message);
    expect(charges).toEqual(['b1', 'b2']);
    expect(first.steps.get('charge')).toEqual({ chargeId: 'ch-b1' });
  });
});

describe('createBatchContext and createBatchMessage', () => {
  it('records the failed messages and lease extensions of a batch handler', async () => {
    const context = createBatchContext();
    const good = createBatchMessage({ n: 1 });
    const bad = createBatchMessage({ n: -1 }, { id: 'bad-1', attempt: 2 });
    await new ImportHandlers().onEvents([good, bad], context);
    expect(context.calls.extendLease).toEqual([1_000]);
    expect(context.calls.fail).toEqual([{ id: 'bad-1', error: new Error('negative') }]);
    expect(good).toMatchObject({ payload: { n: 1 }, attempt: 1, maxAttempts: 5, headers: {} });
    expect(good.id).not.toBe(createBatchMessage(null).id);
    context.abort();
    expect(context.signal.aborted).toBe(true);
  });
});
