import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { RedisAckQueueService } from '../../lib';
import { type Bill, BILLING_PATTERNS, type Quote } from '../../sample-app/billing/billing.messages';
import type { Order } from '../../sample-app/orders/orders.store';
import { useRedis } from '../support/queue-fixture';
import { postJson, readJson, startSampleApp } from '../support/sample-http';
import { SampleProcess } from '../support/sample-process';
import { postgresInstalled } from '../support/test-postgres';

/**
 * The sample's second process: the billing microservice (sample-app/billing/), built, in a
 * process of its own, beside the HTTP app. Its tax rate is set in its process only, so a
 * value computed with it can only have come from there.
 */
describe('sample app and its billing microservice (two processes, real Redis)', () => {
  const fx = useRedis();
  const apps: INestApplication[] = [];
  const processes: SampleProcess[] = [];
  const BILLING_TAX_RATE = '0.07';

  async function startApp(env: Record<string, string> = {}): Promise<{ app: INestApplication; url: string }> {
    // The billing rate is the child's alone: none in this process.
    delete process.env.TAX_RATE;
    const started = await startSampleApp(fx.server.url, { BILLING_TIMEOUT_MS: '30000', ...env });
    apps.push(started.app);
    return started;
  }

  /** Starts the built billing microservice on the test's Redis; resolves once it consumes. */
  async function startBilling(): Promise<SampleProcess> {
    const billing = SampleProcess.start('billing/main.js', { REDIS_URL: fx.server.url, TAX_RATE: BILLING_TAX_RATE });
    processes.push(billing);
    await billing.waitForLine(/Billing microservice up/);
    return billing;
  }

  const post = postJson;
  const read = readJson;
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  afterEach(async () => {
    await Promise.all([...apps.splice(0).map((app) => app.close()), ...processes.splice(0).map((p) => p.stop())]);
    await fx.redis.flushall();
  });

  it('bills an order in the billing process, also one placed while billing was down', async () => {
    // A request that nobody answers times out: a short wait keeps the test short.
    const { app, url } = await startApp({ BILLING_TIMEOUT_MS: '1000' });
    const queue = app.get(RedisAckQueueService);
    const order = await read<Order>(post(`${url}/orders`, { item: 'book', amount: 12, customer: 'ada' }));
    // No billing process yet: the event waits in Redis (the order id is its id), a request gets 504.
    expect(await queue.get(BILLING_PATTERNS.orderPlaced, order.id)).toMatchObject({ state: 'ready' });
    expect((await fetch(`${url}/orders/${order.id}/bill`)).status).toBe(504);

    const billing = await startBilling();
    // The billing process handled the event: its own log says so.
    await billing.waitForLine(new RegExp(`Billed ${escaped(order.id)}: 12\\.84 \\(attempt 1\\)`));
    await queue.waitUntilIdle(BILLING_PATTERNS.orderPlaced);
    expect(await queue.stats(BILLING_PATTERNS.orderPlaced)).toMatchObject({ ready: 0, leased: 0, dead: 0 });
    // And the bill it keeps (in its memory) comes back through a request-reply.
    expect(await read<Bill>(fetch(`${url}/orders/${order.id}/bill`))).toEqual({
      orderId: order.id,
      customer: 'ada',
      amount: 12,
      taxRate: 0.07,
      tax: 0.84,
      total: 12.84,
    });
  });

  it('quotes an order through a request-reply that the billing process answers', async () => {
    const billing = await startBilling();
    const { url } = await startApp();
    const order = await read<Order>(post(`${url}/orders`, { item: 'desk', amount: 250 }));
    const quote = await fetch(`${url}/orders/${order.id}/quote`);
    expect(quote.status).toBe(200);
    expect(await read<Quote>(quote)).toEqual({ amount: 250, taxRate: 0.07, tax: 17.5, total: 267.5 });
    expect((await fetch(`${url}/orders/no-such-order/quote`)).status).toBe(404);
    // SIGTERM drains the microservice and it exits cleanly.
    expect(await billing.stop()).toEqual({ code: 0, signal: null });
  });

  it('dead-letters at once, as rejected, an order.placed event that is not an OrderPlaced', async () => {
    await startBilling();
    const { app } = await startApp();
    const queue = app.get(RedisAckQueueService);
    // What another producer might push by mistake: the billing ValidationPipe refuses it.
    await queue.push(BILLING_PATTERNS.orderPlaced, { orderId: 42, amount: -1 }, { id: 'not-an-order' });
    await queue.waitUntilIdle(BILLING_PATTERNS.orderPlaced);
    const [letter] = await queue.deadLetters(BILLING_PATTERNS.orderPlaced);
    expect(letter).toMatchObject({ id: 'not-an-order', reason: 'rejected', attempt: 1 });
    expect(letter.error).toMatch(/orderId must be a string; amount must be a positive number/);
  });

  it('npm run sample: the app starts billing as its child process, and SIGTERM stops both', async () => {
    const sample = SampleProcess.start('main.js', {
      REDIS_URL: fx.server.url,
      PORT: '0',
      TAX_RATE: BILLING_TAX_RATE,
      PAYMENT_TIMEOUT_MS: '60000',
      INVOICE_FAILURE_RATE: '0',
      // The outbox demo's PostgreSQL has its own test below.
      DATABASE_URL: 'off',
    });
    processes.push(sample);
    const [, url] = await sample.waitForLine(/Orders sample on (http:\/\/\S+)/);
    const [, billingPid] = await sample.waitForLine(/^\[Nest\] (\d+) .*Billing microservice up/);
    expect(Number(billingPid)).not.toBe(sample.pid);

    const order = await read<Order>(post(`${url}/orders`, { item: 'lamp', amount: 30 }));
    expect(await read<Quote>(fetch(`${url}/orders/${order.id}/quote`))).toEqual({
      amount: 30,
      taxRate: 0.07,
      tax: 2.1,
      total: 32.1,
    });
    await sample.waitForLine(new RegExp(`^\\[Nest\\] ${billingPid} .*Billed ${escaped(order.id)}: 32\\.1 `));
    expect(await read<Bill>(fetch(`${url}/orders/${order.id}/bill`))).toMatchObject({ orderId: order.id, total: 32.1 });

    expect(await sample.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    // The app waited for its child: the billing process is gone too.
    expect(() => process.kill(Number(billingPid), 0)).toThrow(/ESRCH/);
  });

  (postgresInstalled() ? it : it.skip)(
    'npm run sample: starts its own PostgreSQL for the outbox demo, and stops it on SIGTERM',
    async () => {
      const sample = SampleProcess.start('main.js', { REDIS_URL: fx.server.url, PORT: '0', DATABASE_URL: '' });
      processes.push(sample);
      const [, port] = await sample.waitForLine(/Started a private PostgreSQL on port (\d+)/, 60_000);
      const [, url] = await sample.waitForLine(/Orders sample on (http:\/\/\S+)/, 60_000);
      const placed = await post(`${url}/placed-orders`, { item: 'lamp', amount: 30 });
      expect(placed.status).toBe(201);
      const order = await read<Order>(placed);
      await sample.waitForLine(new RegExp(`Order ${escaped(order.id)} confirmed`), 60_000);
      expect(await sample.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      // Its PostgreSQL stopped with it: the port refuses connections.
      const client = new Client({ host: '127.0.0.1', port: Number(port), user: 'postgres', database: 'postgres' });
      await expect(client.connect()).rejects.toThrow(/ECONNREFUSED/);
    },
  );

  it('npm run sample without PostgreSQL installed: says the outbox demo is off, and runs the rest', async () => {
    const sample = SampleProcess.start('main.js', {
      REDIS_URL: fx.server.url,
      PORT: '0',
      DATABASE_URL: '',
      POSTGRES_BIN_DIR: '/nonexistent',
    });
    processes.push(sample);
    await sample.waitForLine(/PostgreSQL is not installed .*the outbox demo .* is off/);
    const [, url] = await sample.waitForLine(/Orders sample on (http:\/\/\S+)/);
    expect((await post(`${url}/placed-orders`, { item: 'pen', amount: 2 })).status).toBe(503);
    expect((await post(`${url}/orders`, { item: 'pen', amount: 2 })).status).toBe(202);
    expect(await sample.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
