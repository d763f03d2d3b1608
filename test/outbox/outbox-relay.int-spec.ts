import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { outboxMigrationSql, type RedisAckQueueService } from '../../lib';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { eventually, useRedis, uniqueTopic } from '../support/queue-fixture';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';
import type { OutboxRelay } from '../../lib/outbox/outbox-relay';

const TABLE = 'redis_ack_queue_outbox';

describeWithPostgres('the outbox relay', () => {
  const redis = useRedis();
  let pg: TestPostgres;
  let client: Client;

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
  afterEach(async () => {
    await redis.closeServices();
    await client.query(`DELETE FROM ${TABLE}`);
    await client.query(`DELETE FROM ${TABLE}_relays`);
  });

  const writer = () => redis.service({ outbox: { connection: pg.url, relay: false } });
  const relaying = (relay: { batchSize?: number; pollMs?: number } = {}, options = {}) =>
    redis.service({ outbox: { connection: pg.url, relay }, ...options });
  const depth = async (): Promise<number> =>
    Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${TABLE} WHERE dead_at IS NULL`)).rows[0].n);
  const inTx = async (work: () => Promise<unknown>): Promise<void> => {
    await client.query('BEGIN');
    await work();
    await client.query('COMMIT');
  };
  const readyIds = async (queue: RedisAckQueueService, topic: string): Promise<string[]> =>
    (await queue.list(topic, 'ready', { limit: 1000 })).map((message) => message.id);

  it('pushes committed rows once and deletes them, pushes nothing of a rolled-back transaction, wakes on NOTIFY', async () => {
    // No poll for an hour: only the notification at commit can wake it.
    const queue = await relaying({ pollMs: 3_600_000 });
    const topic = uniqueTopic('relayed');
    await client.query('BEGIN');
    await queue.pushInTransaction(client, topic, { n: 0 });
    await client.query('ROLLBACK');
    let ids: string[] = [];
    await inTx(async () => {
      ids = (await queue.pushManyInTransaction(client, topic, [{ payload: 1 }, { payload: 2 }])).map((r) => r.id!);
    });
    await eventually(async () => (await depth()) === 0, 30_000);
    await eventually(async () => (await readyIds(queue, topic)).length === 2, 10_000);
    expect(await readyIds(queue, topic)).toEqual(ids);
    expect((await queue.list(topic, 'ready')).map((m) => m.payload)).toEqual([1, 2]);
  });

  it('wakes by its poll when no notification comes', async () => {
    await client.query(`ALTER TABLE ${TABLE} DISABLE TRIGGER USER`);
    try {
      const queue = await relaying({ pollMs: 50 });
      const topic = uniqueTopic('polled');
      await inTx(() => queue.pushInTransaction(client, topic, 'x'));
      await eventually(async () => (await readyIds(queue, topic)).length === 1, 30_000);
      // The push comes before the delete's commit: the row may still be there a moment.
      await eventually(async () => (await depth()) === 0, 30_000);
    } finally {
      await client.query(`ALTER TABLE ${TABLE} ENABLE TRIGGER USER`);
    }
  });

  it('keeps the order of each transaction with two relays', async () => {
    const source = await writer();
    // Small batches: the relays take turns; a transaction of 5 rows is still claimed whole.
    await relaying({ batchSize: 3, pollMs: 20 });
    const queue = await relaying({ batchSize: 3, pollMs: 20 });
    const topic = uniqueTopic('ordered');
    const txs = 30;
    const perTx = 5;
    const writers = Array.from({ length: 3 }, async (_, w) => {
      const own = new Client(pg.url);
      await own.connect();
      try {
        for (let t = w; t < txs; t += 3) {
          await own.query('BEGIN');
          for (let seq = 0; seq < perTx; seq += 1) await source.pushInTransaction(own, topic, { t, seq });
          await own.query('COMMIT');
        }
      } finally {
        await own.end();
      }
    });
    await Promise.all(writers);
    await eventually(async () => (await depth()) === 0, 60_000);
    const ready = await queue.list<{ t: number; seq: number }>(topic, 'ready', { limit: 1000 });
    expect(ready).toHaveLength(txs * perTx);
    const seen = new Map<number, number[]>();
    for (const { payload } of ready) seen.set(payload!.t, [...(seen.get(payload!.t) ?? []), payload!.seq]);
    for (let t = 0; t < txs; t += 1) expect(seen.get(t)).toEqual([0, 1, 2, 3, 4]);
    const status = await queue.outboxStatus();
    expect(status.relays).toHaveLength(2);
  });

  it('carries every push option and flows', async () => {
    const queue = await relaying({ pollMs: 50 });
    const topic = uniqueTopic('options');
    const keyed = uniqueTopic('keyed');
    const at = Date.now() + 3_600_000;
    const results: Record<string, string> = {};
    await inTx(async () => {
      results.delayed = (await queue.pushInTransaction(client, topic, 'd', { delayMs: 600_000 })).id!;
      results.at = (await queue.pushInTransaction(client, topic, 'a', { availableAt: new Date(at) })).id!;
      results.rich = (
        await queue.pushInTransaction(client, topic, 'r', {
          priority: 3,
          tags: ['t1'],
          headers: { h: 'v' },
          maxAttempts: 7,
          startBy: new Date(at),
          onExpire: 'drop',
        })
      ).id!;
      results.grouped = (await queue.pushInTransaction(client, topic, 'g', { group: 'g1' })).id!;
      results.expiring = (await queue.pushInTransaction(client, topic, 'e', { expiresInMs: 600_000 })).id!;
      await queue.pushInTransaction(client, keyed, 'deb', { debounce: { key: 'k1', delayMs: 600_000 } });
      await queue.pushInTransaction(client, keyed, 'thr', { throttle: { key: 'k2', windowMs: 600_000 } });
      await queue.pushInTransaction(client, keyed, 'sup', { supersede: { key: 'k3', running: 'keep' } });
    });
    let flowRoot = '';
    let flowChild = '';
    const flowTopic = uniqueTopic('flow');
    await inTx(async () => {
      const flow = await queue.pushFlowInTransaction(client, {
        topic: flowTopic,
        payload: 'root',
        children: [{ topic: flowTopic, payload: 'child' }],
      });
      flowRoot = flow.id;
      flowChild = flow.children[0].id;
    });
    await eventually(async () => (await depth()) === 0, 30_000);
    expect(await client.query(`SELECT 1 FROM ${TABLE}`)).toMatchObject({ rowCount: 0 });
    expect(await queue.get(topic, results.delayed)).toMatchObject({ state: 'delayed' });
    const atMessage = await queue.get(topic, results.at);
    expect(atMessage).toMatchObject({ state: 'delayed' });
    expect(Math.abs(atMessage!.dueAt! - at)).toBeLessThan(1_000);
    expect(await queue.get(topic, results.rich)).toMatchObject({
      priority: 3,
      tags: ['t1'],
      headers: { h: 'v' },
      maxAttempts: 7,
      onExpire: 'drop',
    });
    expect(await queue.get(topic, results.grouped)).toMatchObject({ group: 'g1' });
    expect((await queue.get(topic, results.rich))!.startBy).toBeGreaterThan(at - 1_000);
    expect((await queue.get(topic, results.expiring))!.startBy).toBeGreaterThan(Date.now());
    const keyedMessages = [...(await queue.list(keyed, 'ready')), ...(await queue.list(keyed, 'delayed'))];
    expect(keyedMessages.map((m) => [m.key, m.mode]).sort()).toEqual([
      ['k1', 'debounce'],
      ['k2', 'throttle'],
      ['k3', 'supersede'],
    ]);
    expect(await queue.get(flowTopic, flowRoot)).toMatchObject({ state: 'waiting-children' });
    expect(await queue.get(flowTopic, flowChild)).toMatchObject({ state: 'ready' });
  });

  it('marks a row no push accepts dead, relays the others of its transaction, and lets it be requeued or purged', async () => {
    expectLogs(/can never be pushed/);
    const queue = await relaying({ pollMs: 50 });
    const topic = uniqueTopic('deadrows');
    await client.query('BEGIN');
    await queue.pushInTransaction(client, topic, 'first', { id: 'm1' });
    await client.query(
      `INSERT INTO ${TABLE} (kind, topic, message_id, payload, options) VALUES
         ('push', $1, 'bad1', '1', '{"priority": 99}'), ('weird', $1, 'bad2', '1', NULL),
         ('push', $1, 'bad3', 'not json', NULL)`,
      [topic],
    );
    await queue.pushInTransaction(client, topic, 'last', { id: 'm2' });
    await client.query('COMMIT');
    await eventually(async () => (await depth()) === 0, 30_000);
    expect(await readyIds(queue, topic)).toEqual(['m1', 'm2']);
    const status = await queue.outboxStatus();
    expect(status).toMatchObject({ depth: 0, dead: 3 });
    const dead = await queue.outboxDead();
    expect(dead.map((row) => row.messageId)).toEqual(['bad1', 'bad2', 'bad3']);
    expect(dead[0].reason).toMatch(/^INVALID_OPTION /);
    expect(dead.map((row) => row.reason).join('\n')).not.toContain('not json');
    expect(loggedLines(/can never be pushed/)).toHaveLength(3);
    // A dead row requeued as it is goes dead again; a purged one is gone.
    expect(await queue.requeueOutboxDead([dead[0].rowId])).toBe(1);
    await eventually(async () => (await queue.outboxDead()).some((row) => row.rowId === dead[0].rowId), 30_000);
    expect(await queue.purgeOutboxDead()).toBe(3);
    expect(await queue.outboxStatus()).toMatchObject({ depth: 0, dead: 0 });
  });

  it('keeps the rows while Redis is down, says so in outboxStatus, and relays them once when it is back', async () => {
    expectLogs(
      /Redis cannot be reached/,
      /Redis answers again/,
      /Lost the connection to Redis/,
      /came back without the data/,
    );
    const queue = await relaying({ pollMs: 50 }, { commandTimeoutMs: 2_000 });
    const source = await writer();
    const topic = uniqueTopic('outage');
    await redis.server.kill();
    try {
      await inTx(() =>
        source.pushManyInTransaction(
          client,
          topic,
          Array.from({ length: 10 }, (_, i) => ({ payload: i, id: `o${i}` })),
        ),
      );
      const reporting = new Client(pg.url);
      await reporting.connect();
      try {
        // outboxStatus through the database only: Redis is down.
        await eventually(async () => {
          const { rows } = await reporting.query<{ redis_ok: boolean; last_error: string | null }>(
            `SELECT redis_ok, last_error FROM ${TABLE}_relays`,
          );
          return rows.length === 1 && rows[0].redis_ok === false && typeof rows[0].last_error === 'string';
        }, 30_000);
      } finally {
        await reporting.end();
      }
      expect(await depth()).toBe(10);
    } finally {
      await redis.server.restart();
    }
    await eventually(async () => (await depth()) === 0, 60_000);
    expect(await readyIds(queue, topic)).toEqual(Array.from({ length: 10 }, (_, i) => `o${i}`));
    await eventually(async () => (await queue.outboxStatus()).relays[0]?.redisReachable === true, 30_000);
    expect((await queue.outboxStatus()).relays[0]).toMatchObject({ relayed: 10 });
    // Once per outage, however many tries it took.
    expect(loggedLines(/Redis cannot be reached/)).toHaveLength(1);
    expect(loggedLines(/Redis answers again/)).toHaveLength(1);
  });

  it('waits for its table when it is missing at start, and relays once it is created', async () => {
    expectLogs(/outbox table "late_outbox" does not exist/);
    const table = 'late_outbox';
    const queue = await redis.service({ outbox: { connection: pg.url, table, relay: { pollMs: 50 } } });
    const topic = uniqueTopic('late');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.query(outboxMigrationSql(table));
    try {
      await inTx(() => queue.pushInTransaction(client, topic, 'late'));
      await eventually(async () => (await readyIds(queue, topic)).length === 1, 30_000);
      expect(loggedLines(/does not exist/)).toHaveLength(1);
    } finally {
      await redis.closeServices();
      await client.query(`DROP TABLE ${table}; DROP TABLE ${table}_relays`);
    }
  });

  it('tells its batches to onBatch listeners and deletes its report at stop', async () => {
    const queue = await relaying({ pollMs: 50 });
    const relay = (queue as unknown as { outbox: { relay: OutboxRelay } }).outbox.relay;
    const reports: { relayed: number; lagsMs: number[]; dead: number }[] = [];
    relay.onBatch((report) => reports.push(report));
    const topic = uniqueTopic('observed');
    await inTx(() => queue.pushManyInTransaction(client, topic, [{ payload: 1 }, { payload: 2 }]));
    await eventually(() => reports.reduce((sum, report) => sum + report.relayed, 0) === 2, 30_000);
    expect(reports.flatMap((report) => report.lagsMs)).toHaveLength(2);
    expect(reports.flatMap((report) => report.lagsMs).every((lag) => lag >= 0)).toBe(true);
    await eventually(async () => (await queue.outboxStatus()).relays.length === 1, 30_000);
    await queue.close();
    expect((await client.query(`SELECT 1 FROM ${TABLE}_relays`)).rowCount).toBe(0);
  });

  // Last: it kills the database under the other tests' client.
  it('survives the database killed: says so once, and relays what is committed after its restart', async () => {
    expectLogs(/database cannot be reached/);
    const queue = await relaying({ pollMs: 100 });
    const topic = uniqueTopic('pgdown');
    // A killed postmaster leaves its backends serving their connections: they are killed too.
    const postmaster = readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0].trim();
    const backends = execFileSync('pgrep', ['-P', postmaster]).toString().split('\n').filter(Boolean).map(Number);
    await client.end();
    await pg.kill();
    for (const pid of backends) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await eventually(() => loggedLines(/database cannot be reached/).length > 0, 30_000);
    await pg.resume();
    client = new Client(pg.url);
    await client.connect();
    await inTx(() => queue.pushInTransaction(client, topic, 'after'));
    await eventually(async () => (await depth()) === 0, 30_000);
    expect(await readyIds(queue, topic)).toHaveLength(1);
    expect(loggedLines(/database cannot be reached/)).toHaveLength(1);
    // Its report comes back too.
    await eventually(async () => (await queue.outboxStatus()).relays.length === 1, 30_000);
  });
});
