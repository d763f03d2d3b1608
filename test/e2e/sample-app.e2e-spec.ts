import type { INestApplication } from '@nestjs/common';
import { type RedisAckQueueEvent, RedisAckQueueService } from '../../lib';
import type { OrdersController } from '../../sample-app/orders/orders.controller';
import type { CustomerSummary, Order } from '../../sample-app/orders/orders.store';
import { TOPICS } from '../../sample-app/orders/topics';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { eventually, useRedis } from '../support/queue-fixture';
import { postJson, readJson, startSampleApp } from '../support/sample-http';

describe('sample app (HTTP, real Redis)', () => {
  const fx = useRedis();
  const apps: INestApplication[] = [];

  async function startApp(env: Record<string, string> = {}): Promise<{ app: INestApplication; url: string }> {
    const started = await startSampleApp(fx.server.url, env);
    apps.push(started.app);
    return started;
  }

  /** GET /queues: what the controller returns, as JSON. */
  type QueuesView = Awaited<ReturnType<OrdersController['queues']>>;
  const post = postJson;
  const read = readJson;

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await fx.redis.flushall();
  });

  it('takes an order, sends its confirmation and renders its invoice', async () => {
    const { app, url } = await startApp();
    const response = await post(`${url}/orders`, { item: 'book', amount: 12 });
    expect(response.status).toBe(202);
    const order = await read<Order>(response);
    const queue = app.get(RedisAckQueueService);
    await queue.waitUntilIdle(TOPICS.created);
    await queue.waitUntilIdle(TOPICS.invoice);
    const stored = await read<Order>(fetch(`${url}/orders/${order.id}`));
    expect(stored).toMatchObject({
      status: 'awaiting-payment',
      confirmationSent: true,
      invoice: `invoice-${order.id}.pdf`,
    });
  });

  it("sends one customer's confirmations in order, under the mail topic's fleet-wide rate limit", async () => {
    const { app, url } = await startApp({ MAIL_LATENCY_MS: '5' });
    const queue = app.get(RedisAckQueueService);
    const acked: string[] = [];
    queue.events$.subscribe((e) => e.type === 'acked' && e.topic === TOPICS.created && acked.push(e.id!));
    const orders: Order[] = [];
    for (let i = 0; i < 4; i++)
      orders.push(await read<Order>(post(`${url}/orders`, { item: `b${i}`, amount: 1, customer: 'ada' })));
    await queue.waitUntilIdle(TOPICS.created);
    await eventually(() => acked.length === 4);
    expect(acked).toEqual(orders.map((order) => order.id));
    expect(await queue.limits(TOPICS.created)).toEqual({ rateLimit: { max: 20, perMs: 1_000 } });
    expect((await post(`${url}/orders`, { item: 'x', amount: 1, customer: '' })).status).toBe(400);
  });

  it("computes a customer's summary once after a burst of their orders (a debounced push)", async () => {
    const delayMs = 3_000;
    const { app, url } = await startApp({ SUMMARY_DELAY_MS: String(delayMs) });
    const queue = app.get(RedisAckQueueService);
    const started = Date.now();
    for (let i = 0; i < 3; i++) await post(`${url}/orders`, { item: `b${i}`, amount: 10, customer: 'grace' });
    const burstMs = Date.now() - started;
    const summary = await eventually(async () => {
      const response = await fetch(`${url}/customers/grace/summary`);
      const body = response.status === 200 ? await read<CustomerSummary>(response) : undefined;
      return body?.orders === 3 ? body : undefined;
    }, delayMs + 30_000);
    expect(summary).toMatchObject({ customer: 'grace', orders: 3, total: 30 });
    // Orders that came closer than the delay collapse into one computation (a slower burst may take more).
    if (burstMs < delayMs) expect(summary?.computations).toBe(1);
    await queue.waitUntilIdle(TOPICS.customerSummary);
    expect((await fetch(`${url}/customers/nobody/summary`)).status).toBe(404);
  });

  it('dead-letters a message that is not an OrderMessage at once, as rejected by the ValidationPipe', async () => {
    const { app } = await startApp();
    const queue = app.get(RedisAckQueueService);
    expectLogs(/rejected/);
    // A plain string topic takes any payload: what another producer might push by mistake.
    const topic: string = TOPICS.created;
    await queue.push(topic, { orderId: 42 }, { id: 'not-an-order' });
    await queue.waitUntilIdle(TOPICS.created);
    const [letter] = await queue.deadLetters(TOPICS.created);
    expect(letter).toMatchObject({ id: 'not-an-order', reason: 'rejected', attempt: 1 });
    expect(letter.error).toMatch(/orderId must be a string/);
    expect(loggedLines(/rejected/)).toHaveLength(1);
  });

  it('refuses a bad order with 400 and enqueues nothing', async () => {
    const { app, url } = await startApp();
    const before = await app.get(RedisAckQueueService).stats(TOPICS.created);
    expect((await post(`${url}/orders`, { item: 3 })).status).toBe(400);
    expect(await app.get(RedisAckQueueService).stats(TOPICS.created)).toEqual(before);
  });

  it('cancels an unpaid order at its payment timeout and leaves a paid one alone', async () => {
    const { app, url } = await startApp({ PAYMENT_TIMEOUT_MS: '400' });
    const unpaid = await read<Order>(post(`${url}/orders`, { item: 'lamp', amount: 30 }));
    const paid = await read<Order>(post(`${url}/orders`, { item: 'desk', amount: 200 }));
    await post(`${url}/orders/${paid.id}/pay`);
    await app.get(RedisAckQueueService).waitUntilIdle(TOPICS.paymentTimeout);
    expect((await read<Order>(fetch(`${url}/orders/${unpaid.id}`))).status).toBe('cancelled');
    expect((await read<Order>(fetch(`${url}/orders/${paid.id}`))).status).toBe('paid');
  });

  it('serves Prometheus metrics at /metrics and a terminus health check at /health', async () => {
    const { app, url } = await startApp();
    await post(`${url}/orders`, { item: 'pen', amount: 2 });
    await app.get(RedisAckQueueService).waitUntilIdle(TOPICS.created);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain(`redis_ack_queue_pushed_total{topic="${TOPICS.created}"} 1`);
    expect(metrics).toContain(`redis_ack_queue_acked_total{topic="${TOPICS.created}"} 1`);
    expect(metrics).toMatch(/redis_ack_queue_handler_duration_seconds_count\{topic="order\.created"\} 1/);
    // Gauges read from Redis at scrape time, for every order topic: the payment timeout waits.
    expect(metrics).toContain(`redis_ack_queue_messages{topic="${TOPICS.paymentTimeout}",state="delayed"} 1`);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      info: { queue: { status: 'up', consumers: expect.any(Number) as number, lagMs: { [TOPICS.created]: 0 } } },
    });
  });

  it("serves the operators' dashboard at /dashboard behind its guard, with the order topics", async () => {
    const { url } = await startApp({ DASHBOARD_PASSWORD: '' });
    await post(`${url}/orders`, { item: 'pen', amount: 2 });
    const page = await fetch(`${url}/dashboard`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/dashboard/assets/app.js');
    const topics = await read<{ rows: { topic: string }[] }>(fetch(`${url}/dashboard/api/topics`));
    expect(topics.rows.map((row) => row.topic)).toEqual(expect.arrayContaining([TOPICS.created, TOPICS.invoice]));
  });

  it('asks for the operator password when DASHBOARD_PASSWORD is set', async () => {
    const { url } = await startApp({ DASHBOARD_PASSWORD: 's3cret' });
    const refused = await fetch(`${url}/dashboard`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Basic realm="queues"');
    const wrong = { authorization: `Basic ${Buffer.from('operator:guess').toString('base64')}` };
    expect((await fetch(`${url}/dashboard/api/topics`, { headers: wrong })).status).toBe(401);
    const right = { authorization: `Basic ${Buffer.from('operator:s3cret').toString('base64')}` };
    expect((await fetch(`${url}/dashboard/api/topics`, { headers: right })).status).toBe(200);
  });

  it('cancels the payment timeout of an order as soon as it is paid', async () => {
    const { app, url } = await startApp({ PAYMENT_TIMEOUT_MS: '60000' });
    const queue = app.get(RedisAckQueueService);
    const unpaid = await read<Order>(post(`${url}/orders`, { item: 'lamp', amount: 30 }));
    const paid = await read<Order>(post(`${url}/orders`, { item: 'desk', amount: 200 }));
    expect(await queue.get(TOPICS.paymentTimeout, paid.id)).toMatchObject({ state: 'delayed' });
    expect((await read<Order>(post(`${url}/orders/${paid.id}/pay`))).status).toBe('paid');
    expect(await queue.get(TOPICS.paymentTimeout, paid.id)).toBeNull();
    expect(await queue.get(TOPICS.paymentTimeout, unpaid.id)).toMatchObject({ state: 'delayed' });
    expect((await queue.list(TOPICS.paymentTimeout, 'delayed')).map((m) => m.id)).toEqual([unpaid.id]);
  });

  it('retries a failing invoice three times, then shows it in the dead letters', async () => {
    // The consumer logs both retries (warn) and the dead letter (error).
    expectLogs(
      / of "invoice\.render" failed on attempt [12] of 3/,
      / of "invoice\.render" went to the dead letters as failed on attempt 3/,
    );
    const { url } = await startApp({ INVOICE_FAILURE_RATE: '1' });
    const order = await read<Order>(post(`${url}/orders`, { item: 'chair', amount: 50 }));
    const dead = await eventually(async () => {
      const queues = await read<QueuesView>(fetch(`${url}/queues`));
      return queues.find((q) => q.topic === TOPICS.invoice)!.deadLetters.find((d) => d.id === order.id);
    });
    expect(dead).toMatchObject({
      reason: 'failed',
      attempt: 3,
      error: 'Error: Invoice renderer unavailable (attempt 3 of 3)',
    });
    expect(loggedLines(/invoice\.render/).map((line) => line.level)).toEqual(['warn', 'warn', 'error']);
  });

  it('shutdown hands unfinished work to a second instance at once: nothing lost, nothing acked twice', async () => {
    const first = await startApp({ MAIL_LATENCY_MS: '60000', DRAIN_MS: '300' });
    const events: RedisAckQueueEvent[] = [];
    first.app.get(RedisAckQueueService).events$.subscribe((e) => events.push(e));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push((await read<Order>(post(`${first.url}/orders`, { item: `i${i}`, amount: 1 }))).id);
    const queue = first.app.get(RedisAckQueueService);
    await eventually(async () => (await queue.stats(TOPICS.created)).leased === 5); // concurrency 5
    expectLogs(/Released \d+ unfinished message\(s\)/);
    await first.app.close();
    // The five running handlers did not finish within DRAIN_MS: released at once, and reported.
    const released = loggedLines(/^Released/).filter((line) => line.message.includes(`"${TOPICS.created}"`));
    expect(released).toHaveLength(1);
    expect(released[0]).toMatchObject<Record<string, unknown>>({
      level: 'warn',
      message: expect.stringMatching(/^Released 5 unfinished message\(s\) .*back to ready/),
    });
    apps.splice(apps.indexOf(first.app), 1);

    const second = await startApp({ MAIL_LATENCY_MS: '10' });
    second.app.get(RedisAckQueueService).events$.subscribe((e) => events.push(e));
    const secondQueue = second.app.get(RedisAckQueueService);
    await secondQueue.waitUntilIdle(TOPICS.created);
    const acked = events.filter((e) => e.type === 'acked' && e.topic === TOPICS.created).map((e) => e.id);
    expect(acked.sort()).toEqual([...ids].sort());
    const reserved = events.filter((e) => e.type === 'reserved' && e.topic === TOPICS.created);
    // The interrupted deliveries did not count: every message was handled as attempt 1.
    expect(reserved.every((e) => e.attempt === 1)).toBe(true);
  });

  it('runs the nightly report on its schedule, once per tick with two instances running', async () => {
    try {
      // Every second instead of 02:00, so the test sees ticks.
      const [{ app }] = [
        await startApp({ REPORT_CRON: '* * * * * *' }),
        await startApp({ REPORT_CRON: '* * * * * *' }),
      ];
      const queue = app.get(RedisAckQueueService);
      expect(await queue.schedules()).toEqual([
        expect.objectContaining({ topic: 'report.nightly', name: 'nightly', cron: '* * * * * *', tz: 'UTC' }),
      ]);
      await eventually(() => loggedLines(/^Nightly report/).length >= 3);
      const ids = loggedLines(/^Nightly report/).map((line) => /schedule:nightly:\d+/.exec(line.message)![0]);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      delete process.env.REPORT_CRON;
    }
  });
});
