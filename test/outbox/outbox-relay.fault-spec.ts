import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { outboxMigrationSql, type RedisAckQueueService } from '../../lib';
import { eventually, useRedis, uniqueTopic } from '../support/queue-fixture';
import { TestPostgres } from '../support/test-postgres';

const TABLE = 'redis_ack_queue_outbox';
const RELAY_PROCESS = join(__dirname, '../support/relay-process.js');

/**
 * The relay SIGKILLed at each step of a batch (in a child process: the library built in dist/,
 * `npx nest build`), then another relay finishing: every committed message is in the queue
 * exactly once. The kill points are the relay's test-only hook ACKQ_OUTBOX_TEST_STOP_AT.
 */
describe('fault: the outbox relay killed mid-batch (appendonly yes)', () => {
  const redis = useRedis({ appendonly: true });
  let pg: TestPostgres;
  let client: Client;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    pg = await TestPostgres.start();
    client = new Client(pg.url);
    await client.connect();
    await client.query(outboxMigrationSql());
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await client?.end();
    await pg?.stop();
  });
  afterEach(async () => {
    await redis.closeServices();
    await client.query(`DELETE FROM ${TABLE}`);
  });

  const depth = async (): Promise<number> =>
    Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${TABLE} WHERE dead_at IS NULL`)).rows[0].n);
  const dead = async (): Promise<number> =>
    Number(
      (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${TABLE} WHERE dead_at IS NOT NULL`)).rows[0].n,
    );

  /** Writes `txs` transactions of `perTx` plain pushes and one flow each; returns every message's id by topic. */
  async function write(
    queue: RedisAckQueueService,
    topic: string,
    flowTopic: string,
    txs: number,
    perTx: number,
  ): Promise<{ plain: string[]; roots: string[]; children: string[] }> {
    const written = { plain: [] as string[], roots: [] as string[], children: [] as string[] };
    for (let t = 0; t < txs; t += 1) {
      await client.query('BEGIN');
      const items = Array.from({ length: perTx }, (_, seq) => ({ payload: { t, seq } }));
      written.plain.push(...(await queue.pushManyInTransaction(client, topic, items)).map((result) => result.id!));
      const flow = await queue.pushFlowInTransaction(client, {
        topic: flowTopic,
        payload: { t },
        children: [{ topic: flowTopic, payload: { t, child: true } }],
      });
      written.roots.push(flow.id);
      written.children.push(flow.children[0].id);
      await client.query('COMMIT');
    }
    return written;
  }

  /** Every message once: the ready list of plain pushes, the roots waiting, their children ready. */
  async function expectExactlyOnce(
    queue: RedisAckQueueService,
    topic: string,
    flowTopic: string,
    written: { plain: string[]; roots: string[]; children: string[] },
  ): Promise<void> {
    const ready = (await queue.list(topic, 'ready', { limit: 10_000 })).map((message) => message.id);
    // Several relays keep each transaction's order, not one order across transactions.
    expect(ready.sort()).toEqual([...written.plain].sort());
    const waiting = (await queue.list(flowTopic, 'waiting-children', { limit: 10_000 })).map((m) => m.id);
    expect(waiting.sort()).toEqual([...written.roots].sort());
    const children = (await queue.list(flowTopic, 'ready', { limit: 10_000 })).map((m) => m.id);
    expect(children.sort()).toEqual([...written.children].sort());
    expect(await queue.count(topic, 'ready')).toBe(written.plain.length);
  }

  function startRelay(env: Record<string, string>): {
    child: ChildProcess;
    ready: Promise<void>;
    exit: Promise<string>;
  } {
    const child = spawn(process.execPath, [RELAY_PROCESS], {
      env: { ...process.env, REDIS_URL: redis.server.url, PG_URL: pg.url, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (data: Buffer) => {
        if (data.toString().includes('"ready"')) resolve();
      });
      child.once('exit', () => reject(new Error('the relay process exited before it was ready')));
    });
    ready.catch(() => undefined);
    const exit = new Promise<string>((resolve) =>
      child.once('exit', (code, signal) => resolve(signal ?? String(code))),
    );
    return { child, ready, exit };
  }

  // (2) 'pushed': the push is in Redis, the rows are not deleted. Exactly once then rests on the
  // receipts (RelayPusher.pushRelayed answers 'relayed-before'); with the service's temporary
  // pusher without receipts, the plain pushes are still deduplicated by their ids, but the flow
  // is pushed again and refused (FlowIdTakenError: its row goes dead).
  it.each(['claimed', 'pushed', 'committed'])(
    'a relay SIGKILLed once %s: the next relay finishes, every message exactly once',
    async (step) => {
      const source = await redis.service({ outbox: { connection: pg.url, relay: false } });
      const topic = uniqueTopic(`killed-${step}`);
      const flowTopic = uniqueTopic(`killed-flow-${step}`);
      const written = await write(source, topic, flowTopic, 4, 5);
      const killed = startRelay({ ACKQ_OUTBOX_TEST_STOP_AT: step });
      expect(await killed.exit).toBe('SIGKILL');
      if (step === 'claimed') expect(await depth()).toBe(written.plain.length + written.roots.length);
      const next = await redis.service({ outbox: { connection: pg.url, relay: { pollMs: 50 } } });
      await eventually(async () => (await depth()) === 0, 60_000);
      expect(await dead()).toBe(0);
      await expectExactlyOnce(next, topic, flowTopic, written);
    },
  );

  it('two relays and a Redis restart (appendonly): nothing doubled, nothing lost', async () => {
    const source = await redis.service({ outbox: { connection: pg.url, relay: false } });
    const relays = [startRelay({}), startRelay({})];
    await Promise.all(relays.map((relay) => relay.ready));
    const topic = uniqueTopic('restart');
    const flowTopic = uniqueTopic('restart-flow');
    const first = await write(source, topic, flowTopic, 10, 5);
    await redis.server.restart();
    const second = await write(source, topic, flowTopic, 10, 5);
    await eventually(async () => (await depth()) === 0, 60_000);
    for (const relay of relays) relay.child.kill('SIGTERM');
    await Promise.all(relays.map((relay) => relay.exit));
    expect(await dead()).toBe(0);
    const reader = await redis.service();
    await expectExactlyOnce(reader, topic, flowTopic, {
      plain: [...first.plain, ...second.plain],
      roots: [...first.roots, ...second.roots],
      children: [...first.children, ...second.children],
    });
  });
});
