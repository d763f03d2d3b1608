import { Client } from 'pg';
import {
  InvalidOptionError,
  OutboxNotConfiguredError,
  OutboxTableMissingError,
  OutboxTransactionError,
  outboxMigrationSql,
  type RedisAckQueueService,
} from '../../lib';
import { useRedis, uniqueTopic } from '../support/queue-fixture';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';

describeWithPostgres('pushInTransaction through a pg client (the writer)', () => {
  const redis = useRedis();
  let pg: TestPostgres;
  let client: Client;
  let queue: RedisAckQueueService;

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
    queue = await redis.service({ outbox: { connection: pg.url, relay: false } });
  });

  const rows = async (): Promise<Record<string, unknown>[]> =>
    (
      await client.query<Record<string, unknown>>(
        'SELECT kind, topic, message_id, payload, options FROM redis_ack_queue_outbox ORDER BY id',
      )
    ).rows;

  it('writes a row that commits with the transaction, and nothing when it rolls back', async () => {
    const topic = uniqueTopic('orders');
    await client.query('BEGIN');
    const { id } = await queue.pushInTransaction(
      client,
      topic,
      { order: 1 },
      { delayMs: 5, availableAt: new Date(1e12) },
    );
    await client.query('ROLLBACK');
    expect(await rows()).toEqual([]);
    await client.query('BEGIN');
    const second = await queue.pushInTransaction(client, topic, { order: 2 }, { group: 'g', priority: 0 });
    await client.query('COMMIT');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await rows()).toEqual([
      { kind: 'push', topic, message_id: second.id, payload: '{"order":2}', options: '{"group":"g","priority":0}' },
    ]);
    const status = await queue.outboxStatus();
    expect(status).toMatchObject({ depth: 1, dead: 0, relays: [] });
  });

  it('refuses outside a transaction block, and with bad options, writing nothing', async () => {
    const topic = uniqueTopic();
    await expect(queue.pushInTransaction(client, topic, 1)).rejects.toBeInstanceOf(OutboxTransactionError);
    await client.query('BEGIN');
    await expect(queue.pushInTransaction(client, topic, 1, { priority: 99 })).rejects.toBeInstanceOf(
      InvalidOptionError,
    );
    await expect(
      queue.pushManyInTransaction(client, topic, [{ payload: 1 }, { payload: undefined }]),
    ).rejects.toThrow();
    await client.query('COMMIT');
    expect(await rows()).toEqual([]);
    await expect(queue.pushInTransaction({}, topic, 1)).rejects.toMatchObject({
      code: 'OUTBOX_TRANSACTION',
      reason: 'unknown',
    });
  });

  it('says the table is missing, and a service without an outbox says so', async () => {
    const other = await redis.service({ outbox: { connection: pg.url, table: 'nowhere', relay: false } });
    await client.query('BEGIN');
    await expect(other.pushInTransaction(client, uniqueTopic(), 1)).rejects.toBeInstanceOf(OutboxTableMissingError);
    await client.query('ROLLBACK');
    await expect(other.outboxStatus()).rejects.toBeInstanceOf(OutboxTableMissingError);
    const plain = await redis.service();
    await expect(plain.pushInTransaction(client, uniqueTopic(), 1)).rejects.toBeInstanceOf(OutboxNotConfiguredError);
  });

  it('writes a flow as one row with every node named', async () => {
    await client.query('BEGIN');
    const result = await queue.pushFlowInTransaction(client, {
      topic: 'parent',
      payload: 1,
      children: [{ topic: 'child', payload: 2, id: 'c1' }],
    });
    await client.query('COMMIT');
    expect(result.children[0].id).toBe('c1');
    const [row] = await rows();
    expect(row).toMatchObject({ kind: 'flow', topic: 'parent', message_id: result.id });
  });
});
