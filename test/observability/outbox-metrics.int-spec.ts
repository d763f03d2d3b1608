import { Client } from 'pg';
import { Registry } from 'prom-client';
import { RedisAckQueueMetrics, outboxMigrationSql, type RedisAckQueueService } from '../../lib';
import { freePort } from '../../lib/testing/redis-probe';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';

/** The value of one unlabelled sample of the text exposition, undefined when absent. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

const NAMES = [
  'redis_ack_queue_outbox_depth',
  'redis_ack_queue_outbox_oldest_age_seconds',
  'redis_ack_queue_outbox_dead',
  'redis_ack_queue_outbox_relays',
  'redis_ack_queue_outbox_relay_lag_seconds',
];

/** The outbox's gauges: read from one outboxStatus() per scrape, absent without an outbox. */
describeWithPostgres('Prometheus metrics of the outbox', () => {
  const redis = useRedis();
  let pg: TestPostgres;
  let client: Client;
  let metrics: RedisAckQueueMetrics | undefined;

  beforeAll(async () => {
    pg = await TestPostgres.start();
    client = new Client(pg.url);
    await client.connect();
    await client.query(outboxMigrationSql());
  });
  afterAll(async () => {
    await client?.end();
    await pg?.stop();
  });
  beforeEach(async () => {
    await client.query('DELETE FROM redis_ack_queue_outbox');
    await client.query('DELETE FROM redis_ack_queue_outbox_relays');
  });
  afterEach(() => metrics?.close());

  const withMetrics = (queue: RedisAckQueueService) => {
    const registry = new Registry();
    metrics = new RedisAckQueueMetrics(queue, { registry });
    return registry;
  };

  async function write(queue: RedisAckQueueService, count: number): Promise<void> {
    await client.query('BEGIN');
    for (let i = 0; i < count; i++) await queue.pushInTransaction(client, uniqueTopic('orders'), { i });
    await client.query('COMMIT');
  }

  it('reports depth, oldest age, dead rows, relays and their largest lag', async () => {
    const queue = await redis.service({ outbox: { connection: pg.url, relay: false } });
    const registry = withMetrics(queue);
    await write(queue, 3);
    // One dead row, as a relay leaves one it can never push; the oldest waiting row is 30 s old.
    await client.query(
      `UPDATE redis_ack_queue_outbox SET dead_at = now(), dead_reason = 'X bad' WHERE id = (SELECT max(id) FROM redis_ack_queue_outbox)`,
    );
    await client.query(
      `UPDATE redis_ack_queue_outbox SET created_at = clock_timestamp() - interval '30 seconds' WHERE id = (SELECT min(id) FROM redis_ack_queue_outbox)`,
    );
    await client.query(
      `INSERT INTO redis_ack_queue_outbox_relays (relay_id, host, pid, started_at, seen_at, redis_ok, relayed, lag_ms)
       VALUES ('a', 'h1', 1, now(), now(), true, 5, 1500), ('b', 'h2', 2, now(), now(), false, 0, 4200),
              ('old', 'h3', 3, now() - interval '1 hour', now() - interval '1 hour', true, 0, 99000)`,
    );
    const text = await registry.metrics();
    expect(sample(text, 'redis_ack_queue_outbox_depth')).toBe(2);
    expect(sample(text, 'redis_ack_queue_outbox_dead')).toBe(1);
    // Silent for an hour: not listed, its lag not counted.
    expect(sample(text, 'redis_ack_queue_outbox_relays')).toBe(2);
    expect(sample(text, 'redis_ack_queue_outbox_relay_lag_seconds')).toBe(4.2);
    const oldest = sample(text, 'redis_ack_queue_outbox_oldest_age_seconds')!;
    expect(oldest).toBeGreaterThanOrEqual(30);
    expect(oldest).toBeLessThan(3_600);
    for (const name of NAMES) expect(text).toContain(`# TYPE ${name} gauge`);
  });

  it('reports zeros for an empty outbox without relays', async () => {
    const queue = await redis.service({ outbox: { connection: pg.url, relay: false } });
    const text = await withMetrics(queue).metrics();
    for (const name of NAMES) expect(sample(text, name)).toBe(0);
  });

  it('registers none of them for a service without an outbox', async () => {
    const queue = await redis.service();
    const text = await withMetrics(queue).metrics();
    for (const name of NAMES) expect(text).not.toContain(name);
    expect(text).toContain('# TYPE redis_ack_queue_messages gauge');
  });

  it('serves the other metrics when the outbox database is down, and logs why (no credential)', async () => {
    expectLogs(/reading the outbox status failed/);
    const port = await freePort();
    const queue = await redis.service({
      outbox: { connection: `postgres://ops:s3cret-pw@127.0.0.1:${port}/nowhere`, relay: false },
    });
    const registry = withMetrics(queue);
    const topic = uniqueTopic();
    await queue.push(topic, 1);
    const text = await registry.metrics();
    expect(text).toContain(`redis_ack_queue_pushed_total{topic="${topic}"} 1`);
    expect(text).toContain(`redis_ack_queue_messages{topic="${topic}",state="ready"} 1`);
    for (const name of NAMES) expect(sample(text, name)).toBeUndefined();
    const lines = loggedLines(/reading the outbox status failed/);
    // One read per scrape, shared by the five gauges.
    expect(lines).toHaveLength(1);
    expect(lines[0].message).not.toContain('s3cret-pw');
  });

  it('removes them on close', async () => {
    const queue = await redis.service({ outbox: { connection: pg.url, relay: false } });
    const registry = withMetrics(queue);
    metrics!.close();
    metrics = undefined;
    expect(await registry.metrics()).not.toContain('outbox');
  });
});
