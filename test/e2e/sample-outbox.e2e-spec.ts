import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { RedisAckQueueService } from '../../lib';
import type { PlacedOrder } from '../../sample-app/placed-orders/placed-order.entity';
import { ORDER_COMMITTED } from '../../sample-app/placed-orders/placed-order-topics';
import { eventually, useRedis } from '../support/queue-fixture';
import { postJson, readJson, startSampleApp } from '../support/sample-http';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';

/**
 * The sample's transactional outbox demo (sample-app/placed-orders/): an order and its
 * `order.committed` message in one TypeORM transaction on a private PostgreSQL, relayed into the
 * queue by the app's own relay once committed.
 */
describeWithPostgres('sample app: the transactional outbox demo (HTTP, real Redis and PostgreSQL)', () => {
  const fx = useRedis();
  let pg: TestPostgres;
  let client: Client;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    pg = await TestPostgres.start();
    client = new Client(pg.url);
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await pg?.stop();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await fx.redis.flushall();
  });

  async function startApp(env: Record<string, string> = {}) {
    const started = await startSampleApp(fx.server.url, { DATABASE_URL: pg.url, ...env });
    apps.push(started.app);
    return { ...started, queue: started.app.get(RedisAckQueueService) };
  }

  type Stored = PlacedOrder & { deliveries: number };
  const outboxRows = async (orderId: string) =>
    Number(
      (
        await client.query<{ n: string }>('SELECT count(*) AS n FROM redis_ack_queue_outbox WHERE message_id = $1', [
          orderId,
        ])
      ).rows[0].n,
    );

  it('places an order and delivers its message once, after the commit', async () => {
    const { url, queue } = await startApp();
    const response = await postJson(`${url}/placed-orders`, { item: 'book', amount: 12 });
    expect(response.status).toBe(201);
    const order = await readJson<PlacedOrder>(response);
    // Committed: the relay pushes it (its id is the order's), the handler confirms the order.
    const confirmed = await eventually(async () => {
      const stored = await readJson<Stored>(fetch(`${url}/placed-orders/${order.id}`));
      return stored.status === 'confirmed' ? stored : undefined;
    }, 30_000);
    expect(confirmed).toMatchObject({ id: order.id, item: 'book', amount: 12, deliveries: 1 });
    // Once the outbox is empty and the topic idle, no second delivery can come.
    await eventually(async () => (await queue.outboxStatus()).depth === 0, 30_000);
    await queue.waitUntilIdle(ORDER_COMMITTED);
    expect(await queue.stats(ORDER_COMMITTED)).toMatchObject({ ready: 0, leased: 0, dead: 0 });
    expect(await readJson<Stored>(fetch(`${url}/placed-orders/${order.id}`))).toMatchObject({ deliveries: 1 });
    expect((await postJson(`${url}/placed-orders`, { item: 3 })).status).toBe(400);
  });

  it('rolls a failed order back with its message: no order, no row, no delivery', async () => {
    const { url, queue } = await startApp();
    const failed = await postJson(`${url}/placed-orders?fail=1`, { item: 'lamp', amount: 30 });
    expect(failed.status).toBe(422);
    const [failedId] = /Order (\S+) refused/.exec((await readJson<{ message: string }>(failed)).message)!.slice(1);
    expect((await fetch(`${url}/placed-orders/${failedId}`)).status).toBe(404);
    expect(await outboxRows(failedId)).toBe(0);
    // An order committed after it is relayed after it: once that one is handled, the failed one
    // would have been too, had its message been kept (no timing assumed).
    const later = await readJson<PlacedOrder>(postJson(`${url}/placed-orders`, { item: 'desk', amount: 200 }));
    await eventually(
      async () => (await readJson<Stored>(fetch(`${url}/placed-orders/${later.id}`))).deliveries === 1,
      30_000,
    );
    await queue.waitUntilIdle(ORDER_COMMITTED);
    expect(await readJson<{ deliveries: number }>(fetch(`${url}/placed-orders/${failedId}/deliveries`))).toEqual({
      deliveries: 0,
    });
    expect(await queue.get(ORDER_COMMITTED, failedId)).toBeNull();
  });

  it('answers 503 on the demo when it is off (no PostgreSQL), and the rest of the sample runs', async () => {
    const { url } = await startApp({ DATABASE_URL: 'off' });
    expect((await postJson(`${url}/placed-orders`, { item: 'pen', amount: 2 })).status).toBe(503);
    expect((await postJson(`${url}/orders`, { item: 'pen', amount: 2 })).status).toBe(202);
  });
});
