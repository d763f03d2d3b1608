import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  getQueueToken,
  InjectQueue,
  type MessageContext,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
  UnknownHandlerOverrideError,
} from '../../lib';
import {
  deadLettersOf,
  messagesOf,
  overrideQueueForTesting,
  pushedTo,
  type QueueTestingOptions,
} from '../../lib/testing';
import { InvalidOptionError } from '../../lib';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const fx = useRedis();
const ORDERS = uniqueTopic('orders.created');
const INVOICES = uniqueTopic('invoices.sent');
const REPORTS = uniqueTopic('reports.built');
const real: Record<string, unknown[]> = {};
const record = (topic: string, payload: unknown) => (real[topic] ??= []).push(payload);

@Injectable()
class OrderHandlers {
  @QueueHandler(ORDERS)
  onOrder(payload: unknown) {
    record(ORDERS, payload);
    return { handled: true };
  }

  @QueueHandler(INVOICES)
  onInvoice(payload: unknown) {
    record(INVOICES, payload);
  }
}

@Injectable()
class ReportHandlers {
  constructor(@InjectQueue('reports') readonly reports: RedisAckQueueService) {}

  @QueueHandler(REPORTS, { queue: 'reports' })
  onReport(payload: unknown) {
    record(REPORTS, payload);
  }
}

// The app as written for production: Redis at an address nothing answers (port 1), the default
// queue from forRoot and a named one from forRootAsync. Defined once, before any test runs: no
// import-order trick points it elsewhere.
@Module({
  imports: [
    RedisAckQueueModule.forRoot({ connection: 'redis://127.0.0.1:1', connectTimeoutMs: 1_000, drainMs: 500 }),
    RedisAckQueueModule.forRootAsync({
      name: 'reports',
      useFactory: () => ({ connection: 'redis://127.0.0.1:1', connectTimeoutMs: 1_000, drainMs: 500 }),
    }),
  ],
  providers: [OrderHandlers, ReportHandlers],
})
class AppModule {}

let testing: TestingModule | undefined;
afterEach(async () => {
  await testing?.close();
  testing = undefined;
  for (const topic of Object.keys(real)) delete real[topic];
});

async function boot(options: QueueTestingOptions): Promise<TestingModule> {
  const builder = Test.createTestingModule({ imports: [AppModule] }).setLogger(testLogger());
  testing = await overrideQueueForTesting(builder, { connection: fx.server.url, ...options }).compile();
  await testing.init();
  return testing;
}

describe('overrideQueueForTesting', () => {
  it('points every registration (forRoot, forRootAsync, named) at the test Redis', async () => {
    const app = await boot({});
    const queue = app.get(RedisAckQueueService);
    const reports = app.get<RedisAckQueueService>(getQueueToken('reports'));
    await queue.push(ORDERS, { order: 1 });
    await reports.push(REPORTS, { report: 1 });
    await Promise.all([queue.waitUntilIdle(ORDERS), reports.waitUntilIdle(REPORTS)]);
    expect(real[ORDERS]).toEqual([{ order: 1 }]);
    expect(real[REPORTS]).toEqual([{ report: 1 }]);
  });

  it('fails startup without it: the app points at an address nothing answers', async () => {
    const builder = Test.createTestingModule({ imports: [AppModule] }).setLogger(testLogger());
    await expect(builder.compile()).rejects.toThrow(/Cannot connect to Redis at redis:\/\/127\.0\.0\.1:1\//);
  });

  it('puts a fresh prefix before each registration prefix by default, and a given one when set', async () => {
    let app = await boot({});
    await app.get(RedisAckQueueService).push(ORDERS, 1);
    await app.get(RedisAckQueueService).waitUntilIdle(ORDERS);
    await app.close();
    app = await boot({ prefix: 'my-suite' });
    await app.get(RedisAckQueueService).push(ORDERS, 2);
    await app.get(RedisAckQueueService).waitUntilIdle(ORDERS);
    // Keys are `{<prefix>:<topic>}:<part>`, the ':' of a prefix escaped as %3A.
    const keys = await fx.redis.keys(`*${ORDERS}*`);
    expect(keys.some((key) => key.startsWith(`{my-suite%3Aackq:${ORDERS}}`))).toBe(true);
    expect(keys.some((key) => key.match(/^\{test-[0-9a-f]{12}%3Aackq:/))).toBe(true);
    expect(keys.filter((key) => key.startsWith('{ackq:'))).toEqual([]);
    // Each run saw only its own message.
    expect(real[ORDERS]).toEqual([1, 2]);
    expect((await messagesOf(app.get(RedisAckQueueService), ORDERS)).map(({ id }) => id)).toHaveLength(1);
  });

  it('runs a replacement for one handler while its sibling in the same class runs for real', async () => {
    const fake: { payload: unknown; context: MessageContext }[] = [];
    const app = await boot({
      handlers: { [ORDERS]: (payload: unknown, context: MessageContext) => void fake.push({ payload, context }) },
    });
    const queue = app.get(RedisAckQueueService);
    await queue.push(ORDERS, { order: 2 }, { id: 'order-2' });
    await queue.push(INVOICES, { invoice: 2 });
    await Promise.all([queue.waitUntilIdle(ORDERS), queue.waitUntilIdle(INVOICES)]);
    expect(fake).toHaveLength(1);
    expect(fake[0].payload).toEqual({ order: 2 });
    expect(fake[0].context).toMatchObject({ id: 'order-2', topic: ORDERS, attempt: 1 });
    expect(real[ORDERS]).toBeUndefined();
    expect(real[INVOICES]).toEqual([{ invoice: 2 }]);
  });

  it('replaces a handler of a named queue', async () => {
    const fake: unknown[] = [];
    const app = await boot({ handlers: { [REPORTS]: (payload: unknown) => void fake.push(payload) } });
    const reports = app.get(ReportHandlers).reports;
    await reports.push(REPORTS, 'r');
    await reports.waitUntilIdle(REPORTS);
    expect(fake).toEqual(['r']);
    expect(real[REPORTS]).toBeUndefined();
  });

  it('fails startup with UnknownHandlerOverrideError for a topic no handler consumes', async () => {
    const builder = overrideQueueForTesting(
      Test.createTestingModule({ imports: [AppModule] }).setLogger(testLogger()),
      {
        connection: fx.server.url,
        handlers: { 'orders.craeted': () => undefined },
      },
    );
    testing = await builder.compile();
    const error = await testing.init().then(
      () => undefined,
      (e: unknown) => {
        testing = undefined; // a failed startup closed its connections
        return e;
      },
    );
    expect(error).toBeInstanceOf(UnknownHandlerOverrideError);
    expect((error as UnknownHandlerOverrideError).topic).toBe('orders.craeted');
    expect((error as Error).message).toContain('"orders.craeted"');
    expect((error as Error).message).toContain(`"${ORDERS}"`);
  });

  it('keeps acked messages readable, and dead letters with their error', async () => {
    expectLogs(/invoice-bad of .* went to the dead letters/);
    const app = await boot({
      handlers: {
        [INVOICES]: (payload: { ok: boolean }) => {
          if (!payload.ok) throw new Error('card declined');
        },
      },
    });
    const queue = app.get(RedisAckQueueService);
    await queue.push(ORDERS, { order: 3 }, { id: 'order-3' });
    await queue.push(INVOICES, { ok: false }, { id: 'invoice-bad', maxAttempts: 1 });
    await queue.push(INVOICES, { ok: true }, { id: 'invoice-good' });
    await Promise.all([queue.waitUntilIdle(ORDERS), queue.waitUntilIdle(INVOICES)]);

    const [order] = await messagesOf(queue, ORDERS);
    expect(order).toMatchObject({ id: 'order-3', state: 'completed', attempt: 1, result: { handled: true } });
    const invoices = await messagesOf(queue, INVOICES);
    expect(invoices.map(({ id, state }) => [id, state])).toEqual([
      ['invoice-good', 'completed'],
      ['invoice-bad', 'dead'],
    ]);
    expect(invoices[1]).toMatchObject({ payload: { ok: false }, attempt: 1 });
    expect(invoices[1].error).toContain('card declined');
    expect(await messagesOf(queue, INVOICES, { states: ['dead'] })).toHaveLength(1);

    const dead = await deadLettersOf(queue, INVOICES);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ id: 'invoice-bad', payload: { ok: false }, attempt: 1, reason: 'failed' });
    expect(dead[0].error).toContain('card declined');
  });

  it('lists pending messages with their payloads (no handler has run them yet)', async () => {
    const app = await boot({});
    const queue = app.get(RedisAckQueueService);
    await queue.push(ORDERS, { later: true }, { id: 'later', delayMs: 60_000 });
    expect(await messagesOf(queue, ORDERS)).toEqual([
      expect.objectContaining({ id: 'later', state: 'delayed', payload: { later: true } }),
    ]);
  });

  it('leaves keepCompleted off when told', async () => {
    const app = await boot({ keepCompleted: false });
    const queue = app.get(RedisAckQueueService);
    await queue.push(ORDERS, 4);
    await queue.waitUntilIdle(ORDERS);
    await eventually(() => real[ORDERS]?.length === 1);
    expect(await messagesOf(queue, ORDERS)).toEqual([]);
  });

  it('records what the app pushed, payloads included after their handler acked them (pushedTo)', async () => {
    const app = await boot({});
    const queue = app.get(RedisAckQueueService);
    const reports = app.get<RedisAckQueueService>(getQueueToken('reports'));
    const order = { orderId: 'o-1', lines: [{ sku: 'book', qty: 2 }] };
    await queue.push(ORDERS, order, { id: 'o-1', headers: { tenant: 'acme' } });
    order.lines[0].qty = 99; // a later change of the app's object is not what was pushed
    await queue.push(ORDERS, { orderId: 'again' }, { id: 'o-1' }); // a duplicate
    await queue.pushMany(ORDERS, [{ payload: { orderId: 'o-2' }, priority: 3 }]);
    await reports.push(REPORTS, { report: 'weekly' });
    await queue.waitUntilIdle(ORDERS);
    await reports.waitUntilIdle(REPORTS);

    // The handler acked them: the queue keeps their completed records, with results and payloads.
    expect((await messagesOf(queue, ORDERS)).map(({ payload }) => payload)).toEqual(
      expect.arrayContaining([{ orderId: 'o-2' }, { orderId: 'o-1', lines: [{ sku: 'book', qty: 2 }] }]),
    );
    const pushed = await pushedTo<{ orderId: string }>(queue, ORDERS);
    expect(pushed).toEqual([
      {
        topic: ORDERS,
        id: 'o-1',
        payload: { orderId: 'o-1', lines: [{ sku: 'book', qty: 2 }] },
        options: { id: 'o-1', headers: { tenant: 'acme' } },
        duplicate: false,
      },
      { topic: ORDERS, id: 'o-1', payload: { orderId: 'again' }, options: { id: 'o-1' }, duplicate: true },
      {
        topic: ORDERS,
        id: expect.any(String) as string,
        payload: { orderId: 'o-2' },
        options: { priority: 3 },
        duplicate: false,
      },
    ]);
    expect((await pushedTo(reports, REPORTS)).map(({ payload }) => payload)).toEqual([{ report: 'weekly' }]);
    expect(await pushedTo(queue, REPORTS)).toEqual([]);
    // A push the queue refused is not recorded.
    await expect(queue.push(ORDERS, { n: Number.NaN })).rejects.toThrow();
    expect(await pushedTo(queue, ORDERS)).toHaveLength(3);
  });

  it('records every node of a pushFlow, a child with its parent (pushedTo)', async () => {
    const app = await boot({});
    const queue = app.get(RedisAckQueueService);
    const flow = await queue.pushFlow({
      topic: INVOICES,
      payload: { invoice: 'i-1' },
      id: 'i-1',
      options: { headers: { tenant: 'acme' } },
      children: [
        { topic: ORDERS, payload: { orderId: 'c-1' }, id: 'c-1', options: { onChildFailure: 'continue' } },
        { topic: ORDERS, payload: { orderId: 'c-2' } },
      ],
    });

    const parent = { topic: INVOICES, id: 'i-1' };
    expect(await pushedTo(queue, INVOICES)).toEqual([
      {
        topic: INVOICES,
        id: 'i-1',
        payload: { invoice: 'i-1' },
        options: { headers: { tenant: 'acme' } },
        duplicate: false,
      },
    ]);
    expect(await pushedTo(queue, ORDERS)).toEqual([
      {
        topic: ORDERS,
        id: 'c-1',
        payload: { orderId: 'c-1' },
        options: { onChildFailure: 'continue' },
        duplicate: false,
        parent,
      },
      { topic: ORDERS, id: flow.children[1].id, payload: { orderId: 'c-2' }, options: {}, duplicate: false, parent },
    ]);
  });

  it('pushedTo is async, and refuses a service that no testing override built', async () => {
    const service = {}; // e.g. a service made with new, outside the testing module
    await expect(pushedTo(service, ORDERS)).rejects.toThrow(InvalidOptionError);
    await expect(pushedTo(service, ORDERS)).rejects.toThrow(/overrideQueueForTesting/);
  });
});
