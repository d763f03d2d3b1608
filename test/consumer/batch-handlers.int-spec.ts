import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  Module,
  type NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { tap } from 'rxjs/operators';
import {
  type BatchContext,
  type BatchMessage,
  InvalidOptionError,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
} from '../../lib';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const payloads = (messages: BatchMessage<unknown>[]) => messages.map((m) => m.payload);

describe('batch handlers', () => {
  const fx = useRedis();
  expectLogs(/failed on attempt/, /went to the dead letters as/);

  it('hands over a full batch as soon as maxSize messages are there', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, n) => ({ payload: n })),
    );
    const calls: unknown[][] = [];
    const startedAt = Date.now();
    queue.consume(topic, (messages) => void calls.push(payloads(messages)), {
      batch: { maxSize: 5, maxWaitMs: 5_000 },
    });
    await eventually(() => calls.length === 2);
    expect(Date.now() - startedAt).toBeLessThan(4_000);
    expect(calls.flat().sort((a, b) => Number(a) - Number(b))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(calls.map((c) => c.length)).toEqual([5, 5]);
    await queue.waitUntilIdle(topic);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 0, dead: 0 });
  });

  it('hands over a partial batch maxWaitMs after its first message', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const calls: { size: number; at: number }[] = [];
    queue.consume(topic, (messages) => void calls.push({ size: messages.length, at: Date.now() }), {
      batch: { maxSize: 50, maxWaitMs: 300 },
    });
    const pushedAt = Date.now();
    await queue.pushMany(topic, [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
    await eventually(() => calls.length === 1);
    expect(calls[0].size).toBe(3);
    expect(calls[0].at - pushedAt).toBeGreaterThanOrEqual(250);
  });

  it('retries only the messages reported with fail(), acks the others, and buries after the last attempt', async () => {
    const queue = await fx.service({ backoff: { type: 'fixed', delayMs: 20 } });
    const topic = uniqueTopic();
    await queue.pushMany(topic, [
      { payload: 'ok-1', id: 'ok-1' },
      { payload: 'flaky', id: 'flaky' },
      { payload: 'ok-2', id: 'ok-2' },
      { payload: 'bad', id: 'bad', maxAttempts: 2 },
    ]);
    const seen: string[] = [];
    queue.consume(
      topic,
      (messages: BatchMessage<string>[], context: BatchContext) => {
        for (const message of messages) {
          seen.push(`${message.payload}#${message.attempt}`);
          if (message.payload === 'flaky' && message.attempt === 1) context.fail(message, new Error('flaky'));
          if (message.payload === 'bad') context.fail(message.id, new Error('always'));
        }
      },
      { batch: { maxSize: 10, maxWaitMs: 50 } },
    );
    await eventually(async () => (await queue.stats(topic)).dead === 1 && seen.includes('flaky#2'));
    await queue.waitUntilIdle(topic);
    expect(seen.filter((s) => s.startsWith('ok')).sort()).toEqual(['ok-1#1', 'ok-2#1']);
    expect(seen.filter((s) => s.startsWith('flaky'))).toEqual(['flaky#1', 'flaky#2']);
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ id: 'bad', attempt: 2, reason: 'failed' });
    expect(letter.error).toContain('always');
  });

  it('fails every message of a batch whose handler throws', async () => {
    const queue = await fx.service({ backoff: { type: 'fixed', delayMs: 20 } });
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    const attempts: number[][] = [];
    queue.consume(
      topic,
      (messages) => {
        attempts.push(messages.map((m) => m.attempt));
        if (messages[0].attempt === 1) throw new Error('downstream down');
      },
      { batch: { maxSize: 3, maxWaitMs: 100 } },
    );
    await eventually(() => attempts.flat().length === 6);
    await queue.waitUntilIdle(topic);
    expect(attempts.flat().sort()).toEqual([1, 1, 1, 2, 2, 2]);
  });

  it('keeps every lease of a long batch alive, and refuses a foreign message in fail()', async () => {
    // A batch outliving its leases three times over; a lease long enough that a loaded machine's
    // stall (a heartbeat comes every third of it) does not lose one: the check is that none lapses.
    const leaseMs = 1_000;
    const queue = await fx.service({ leaseMs });
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }]);
    const events: string[] = [];
    queue.events$.subscribe((e) => e.topic === topic && events.push(e.type));
    let refusal: unknown;
    let runs = 0;
    queue.consume(
      topic,
      async (_messages, context) => {
        runs++;
        try {
          context.fail('not-in-this-batch', new Error('x'));
        } catch (error) {
          refusal = error;
        }
        await sleep(3.5 * leaseMs);
      },
      // Both messages in one batch however slow the machine: it closes when full, not on a timer.
      { batch: { maxSize: 2, maxWaitMs: 60_000 } },
    );
    await eventually(() => events.filter((type) => type === 'acked').length === 2);
    expect(runs).toBe(1);
    expect(events).not.toContain('lease-lost');
    expect(refusal).toBeInstanceOf(InvalidOptionError);
  });

  it('runs at most `concurrency` batch calls at once, and never two of one group in a batch', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [
      ...Array.from({ length: 6 }, (_, n) => ({ payload: `a${n}`, group: 'a' })),
      ...Array.from({ length: 12 }, (_, n) => ({ payload: `x${n}` })),
    ]);
    let running = 0;
    let most = 0;
    const batches: string[][] = [];
    queue.consume(
      topic,
      async (messages: BatchMessage<string>[]) => {
        most = Math.max(most, ++running);
        batches.push(messages.map((m) => m.payload));
        await sleep(30);
        running--;
      },
      { batch: { maxSize: 4, maxWaitMs: 20 }, concurrency: 2 },
    );
    await eventually(() => batches.flat().length === 18);
    expect(most).toBeLessThanOrEqual(2);
    for (const batch of batches) expect(batch.filter((p) => p.startsWith('a')).length).toBeLessThanOrEqual(1);
    const groupOrder = batches.flat().filter((p) => p.startsWith('a'));
    expect(groupOrder).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('refuses bad batch options before anything starts', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    for (const batch of [{ maxSize: 0, maxWaitMs: 10 }, { maxSize: 1001, maxWaitMs: 10 }, { maxSize: 5 }, 7]) {
      expect(() => queue.consume(topic, () => undefined, { batch: batch as never })).toThrow(InvalidOptionError);
    }
  });

  it('works as a @QueueHandler with an interceptor around the whole batch', async () => {
    const topic = uniqueTopic();
    const seen: { sizes: number[]; intercepted: number } = { sizes: [], intercepted: 0 };
    @Injectable()
    class Counting implements NestInterceptor {
      intercept(_context: ExecutionContext, next: CallHandler) {
        return next.handle().pipe(tap(() => seen.intercepted++));
      }
    }
    @Injectable()
    class Handlers {
      @QueueHandler(topic, { batch: { maxSize: 3, maxWaitMs: 50 } })
      @UseInterceptors(Counting)
      handle(messages: BatchMessage<number>[], context: BatchContext) {
        expect(context.topic).toBe(topic);
        seen.sizes.push(messages.length);
      }
    }
    @Module({ imports: [RedisAckQueueModule.forRoot({ connection: fx.connection })], providers: [Handlers] })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: testLogger() });
    try {
      const queue = app.get(RedisAckQueueService);
      await queue.pushMany(
        topic,
        [1, 2, 3, 4, 5, 6].map((n) => ({ payload: n })),
      );
      await eventually(() => seen.sizes.reduce((a, b) => a + b, 0) === 6);
      await queue.waitUntilIdle(topic);
      expect(seen.intercepted).toBe(seen.sizes.length);
    } finally {
      await app.close();
    }
  });
});
