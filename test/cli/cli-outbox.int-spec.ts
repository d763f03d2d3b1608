import { Client } from 'pg';
import { outboxMigrationSql, type OutboxDeadRow, type OutboxStatus, type RedisAckQueueService } from '../../lib';
import { freePort } from '../../lib/testing/redis-probe';
import { type CliRun, runCliHere } from '../support/cli-runs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';

/**
 * `outbox`, `outbox dead`, `outbox requeue`, `outbox purge`: the outbox's status and its dead
 * rows, from PostgreSQL only (no relay runs, Redis need not answer), the URL never printed.
 */
describeWithPostgres('redis-ack-queue outbox', () => {
  const redis = useRedis();
  let pg: TestPostgres;
  let client: Client;
  let queue: RedisAckQueueService;
  let cli: (...args: string[]) => Promise<CliRun>;

  beforeAll(async () => {
    pg = await TestPostgres.start();
    client = new Client(pg.url);
    await client.connect();
    await client.query(outboxMigrationSql());
    await client.query(outboxMigrationSql('ops.outbox').replace(/^/, 'CREATE SCHEMA IF NOT EXISTS ops;\n'));
    queue = await redis.service({ outbox: { connection: pg.url, relay: false } });
    cli = (...args) => runCliHere(['--url', redis.server.url, ...args]);
  });
  afterAll(async () => {
    await client?.end();
    await pg?.stop();
  });
  beforeEach(async () => {
    for (const table of ['redis_ack_queue_outbox', 'redis_ack_queue_outbox_relays', 'ops.outbox'])
      await client.query(`DELETE FROM ${table}`);
  });

  async function write(count: number): Promise<void> {
    await client.query('BEGIN');
    for (let i = 0; i < count; i++) await queue.pushInTransaction(client, uniqueTopic('orders'), { i });
    await client.query('COMMIT');
  }

  async function dead(topic: string, messageId: string, table = 'redis_ack_queue_outbox'): Promise<string> {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO ${table} (topic, message_id, payload, dead_at, dead_reason)
       VALUES ($1, $2, '{}', now(), 'INVALID_OPTION bad options') RETURNING id::text`,
      [topic, messageId],
    );
    return rows[0].id;
  }

  const deadCount = async (table = 'redis_ack_queue_outbox') =>
    Number(
      (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE dead_at IS NOT NULL`)).rows[0].n,
    );

  it('prints the status, as text and as JSON, with the relays', async () => {
    await write(2);
    await dead('orders', 'm-1');
    await client.query(
      `INSERT INTO redis_ack_queue_outbox_relays (relay_id, host, pid, started_at, seen_at, redis_ok, last_error, relayed, lag_ms)
       VALUES ('r1', 'worker-1', 4242, now(), now(), false, 'REDIS_UNAVAILABLE refused', 17, 2500)`,
    );
    const text = await cli('outbox', '--outbox', pg.url);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/^depth: +2\n/);
    expect(text.stdout).toMatch(/\ndead: +1\n/);
    expect(text.stdout).toMatch(/\nrelays: +1\n/);
    expect(text.stdout).toMatch(/worker-1 +4242 +unreachable +REDIS_UNAVAILABLE refused +17 +2500 /);

    const json = await cli('--json', 'outbox', '--outbox', pg.url);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    const status = JSON.parse(json.stdout) as OutboxStatus;
    expect(status).toMatchObject({ depth: 2, dead: 1, relays: [{ host: 'worker-1', pid: 4242, lagMs: 2500 }] });
  });

  it('reads the URL from OUTBOX_URL and another table with --outbox-table, and answers while Redis is down', async () => {
    await dead('a', '1', 'ops.outbox');
    const port = await freePort();
    const run = await runCliHere(
      ['--url', `redis://127.0.0.1:${port}`, '--json', 'outbox', '--outbox-table', 'ops.outbox'],
      {
        OUTBOX_URL: pg.url,
      },
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({ depth: 0, dead: 1, relays: [] });
  });

  it('lists dead rows (--limit), requeues some by id and purges all with --yes', async () => {
    const ids = [await dead('a', 'm-a'), await dead('<b>b</b>\u001b[31m', 'm-b'), await dead('c', '')];
    const listed = await cli('--json', 'outbox', 'dead', '--outbox', pg.url, '--limit', '2');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const rows = JSON.parse(listed.stdout) as OutboxDeadRow[];
    expect(rows.map((row) => row.rowId)).toEqual(ids.slice(0, 2));
    const table = await cli('outbox', 'dead', '--outbox', pg.url);
    expect(table.stdout).toMatch(/^ROW +TOPIC +MESSAGE ID +REASON +DEAD AT\n/);
    // A terminal escape in a topic is printed inert.
    expect(table.stdout).toContain('<b>b</b>\\x1b[31m');
    expect(table.stdout).not.toContain('\u001b');

    const requeued = await cli('--yes', 'outbox', 'requeue', ids[0], '--outbox', pg.url);
    expect(requeued).toMatchObject({ code: 0, stdout: 'Requeued 1 dead outbox row.\n' });
    expect(await deadCount()).toBe(2);
    const purged = await cli('--yes', '--json', 'outbox', 'purge', '--all', '--outbox', pg.url);
    expect(JSON.parse(purged.stdout)).toEqual({ purged: 2 });
    expect(await deadCount()).toBe(0);
    expect((await client.query<{ n: string }>('SELECT count(*) AS n FROM redis_ack_queue_outbox')).rows[0].n).toBe('1');
  });

  it.each([
    [['outbox', 'requeue']],
    [['outbox', 'requeue', '1', '--all']],
    [['outbox', 'purge', 'not-a-row']],
    [['outbox', 'dead', '--limit', '0']],
  ])('refuses %j as a usage error (exit 2), changing nothing', async (args) => {
    await dead('a', '1');
    const run = await cli('--yes', ...args, '--outbox', pg.url);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(await deadCount()).toBe(1);
  });

  it('refuses a sweep off a terminal without --yes, changing nothing', async () => {
    await dead('a', '1');
    const run = await cli('outbox', 'purge', '--all', '--outbox', pg.url);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--yes');
    expect(await deadCount()).toBe(1);
  });

  it('needs a postgres URL, and never prints one with its password', async () => {
    expect((await cli('outbox')).code).toBe(2);
    const mysql = await cli('outbox', '--outbox', 'mysql://root:hunter22@db/x');
    expect(mysql.code).toBe(2);
    expect(mysql.stderr).not.toContain('hunter22');
    const port = await freePort();
    for (const url of [
      `postgres://ops:hunter22@127.0.0.1:${port}/nowhere`,
      `postgres://ops:hunter22@127.0.0.1:${pg.port}/nowhere`,
    ]) {
      const down = await cli('outbox', '--outbox', url);
      expect(down.code).toBe(1);
      expect(down.stderr).toMatch(/^redis-ack-queue: /);
      expect(down.stderr + down.stdout).not.toContain('hunter22');
    }
    const missing = await cli('outbox', '--outbox', pg.url, '--outbox-table', 'nowhere');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nowhere');
  });
});
