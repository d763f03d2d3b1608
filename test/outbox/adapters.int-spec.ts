import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { Client, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { drizzle as drizzleMysqlProxy } from 'drizzle-orm/mysql-proxy';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { InvalidOptionError, OutboxTransactionError, type OutboxTransactionReason } from '../../lib/errors';
import type { RedisAckQueueService } from '../../lib';
import { DEFAULT_OUTBOX_TABLE, OutboxTable, outboxMigrationSql } from '../../lib/outbox/outbox-table';
import { adapterFor } from '../../lib/outbox/adapters/adapter-for';
import type { OutboxAdapter } from '../../lib/outbox/adapters/outbox-adapter';
import { typeormAdapter } from '../../lib/outbox/adapters/typeorm.adapter';
import { prismaAdapter } from '../../lib/outbox/adapters/prisma.adapter';
import { mikroOrmAdapter } from '../../lib/outbox/adapters/mikro-orm.adapter';
import { drizzleAdapter } from '../../lib/outbox/adapters/drizzle.adapter';
import { kyselyAdapter } from '../../lib/outbox/adapters/kysely.adapter';
import { pgAdapter } from '../../lib/outbox/adapters/pg.adapter';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';

/**
 * Each outbox adapter with its real library against a real PostgreSQL (one for the file): a
 * write inside a transaction is seen after commit and not after rollback, the library's
 * non-transaction object and an ended transaction are refused, and adapterFor tells them apart.
 */

const table = new OutboxTable(DEFAULT_OUTBOX_TABLE);

/** The writer's statement for one row of `topic` (options NULL, as a push without options). */
const insert = (topic: string) => ({
  sql: table.insert(),
  params: [['push'], [topic], ['m-1'], ['{"a":1}'], [null]],
});

describeWithPostgres('each outbox adapter with its real library', () => {
  const redis = useRedis();
  let pg: TestPostgres;
  let reader: Pool;
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    pg = await TestPostgres.start();
    reader = new Pool({ ...pg.poolOptions, max: 2 });
    await reader.query(outboxMigrationSql());
    queue = await redis.service({ outbox: { connection: pg.url, relay: false } });
  });

  afterAll(async () => {
    await reader?.end();
    await pg?.stop();
  });

  /** The committed rows of `topic`, as another connection sees them. */
  async function rowsOf(topic: string): Promise<number> {
    const result = await reader.query('SELECT count(*)::int AS n FROM redis_ack_queue_outbox WHERE topic = $1', [
      topic,
    ]);
    return (result.rows[0] as { n: number }).n;
  }

  /** The OutboxTransactionError `act` throws (synchronously or not), checked for its reason and library. */
  async function refusal(act: () => unknown, reason: OutboxTransactionReason, library?: string) {
    let caught: unknown;
    try {
      await act();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OutboxTransactionError);
    expect((caught as OutboxTransactionError).reason).toBe(reason);
    expect((caught as OutboxTransactionError).library).toBe(library);
    return caught as OutboxTransactionError;
  }

  /** What a writer does: pick the adapter, check the object, write one row; returns the adapter and rows. */
  async function write(tx: object, topic: string): Promise<[OutboxAdapter, Record<string, unknown>[]]> {
    const adapter = adapterFor(tx);
    adapter.assertUsable(tx);
    return [adapter, await adapter.query(tx, insert(topic))];
  }

  /** The message ids of the committed rows of `topic`, in insert order. */
  async function messageIdsOf(topic: string): Promise<string[]> {
    const result = await reader.query<{ message_id: string }>(
      'SELECT message_id FROM redis_ack_queue_outbox WHERE topic = $1 ORDER BY id',
      [topic],
    );
    return result.rows.map((row) => row.message_id);
  }

  /**
   * The writer end to end through one library: `inTransaction` runs its callback in a transaction
   * of the library and commits (or rolls back when the callback throws); `outside` is the
   * library's object that is not a transaction.
   */
  async function throughWriter(
    library: string,
    inTransaction: <T>(work: (tx: object) => Promise<T>) => Promise<T>,
    outside: object,
  ): Promise<void> {
    const topic = uniqueTopic(library);
    const { id } = await inTransaction((tx) => queue.pushInTransaction(tx, topic, { n: 1 }, { priority: 1 }));
    await rolledBack(() =>
      inTransaction(async (tx) => {
        await queue.pushInTransaction(tx, topic, { n: 2 });
        throw new Rollback();
      }),
    );
    await inTransaction(async (tx) => {
      await expect(queue.pushInTransaction(tx, topic, { n: 3 }, { priority: 99 })).rejects.toBeInstanceOf(
        InvalidOptionError,
      );
    });
    await refusal(() => queue.pushInTransaction(outside, topic, { n: 4 }), 'not-in-transaction', library);
    expect(await messageIdsOf(topic)).toEqual([id]);
  }

  class Rollback extends Error {}

  /** Runs `work`, which throws Rollback to end its transaction so; other errors pass. */
  async function rolledBack(work: () => Promise<unknown>): Promise<void> {
    await expect(work()).rejects.toBeInstanceOf(Rollback);
  }

  describe('adapterFor refuses what is no library object', () => {
    it.each([
      ['a plain object', {}],
      ['null', null],
      ['a string', 'tx'],
      ['a number', 1],
      ['undefined', undefined],
    ])('%s -> unknown', async (_name, value) => {
      const error = await refusal(() => adapterFor(value), 'unknown');
      expect(error.message).toContain('prisma.$transaction(async (tx) => ...)');
    });
  });

  describe('TypeORM', () => {
    let dataSource: DataSource;

    beforeAll(async () => {
      dataSource = new DataSource({ type: 'postgres', url: pg.url, poolSize: 3 });
      await dataSource.initialize();
    });
    afterAll(() => dataSource?.destroy());

    it('writes through the manager of transaction(): seen after commit', async () => {
      const rows = await dataSource.transaction(async (manager) => {
        const [adapter, written] = await write(manager, 'typeorm-manager');
        expect(adapter).toBe(typeormAdapter);
        expect(await rowsOf('typeorm-manager')).toBe(0);
        return written;
      });
      expect(rows).toEqual([{ id: expect.any(String) as unknown }]);
      expect(await rowsOf('typeorm-manager')).toBe(1);
    });

    it('writes through a QueryRunner after startTransaction(); refuses it after commit and after release', async () => {
      const runner = dataSource.createQueryRunner();
      await refusal(() => typeormAdapter.assertUsable(runner), 'not-in-transaction', 'typeorm');
      await runner.startTransaction();
      const [adapter, rows] = await write(runner, 'typeorm-runner');
      expect(adapter).toBe(typeormAdapter);
      expect(rows).toHaveLength(1);
      await runner.commitTransaction();
      expect(await rowsOf('typeorm-runner')).toBe(1);
      await refusal(() => typeormAdapter.assertUsable(runner), 'not-in-transaction', 'typeorm');
      await runner.release();
      await refusal(() => typeormAdapter.assertUsable(runner), 'closed', 'typeorm');
    });

    it('writes nothing when the transaction rolls back', async () => {
      await rolledBack(() =>
        dataSource.transaction(async (manager) => {
          await write(manager, 'typeorm-rollback');
          throw new Rollback();
        }),
      );
      const runner = dataSource.createQueryRunner();
      await runner.startTransaction();
      await write(runner, 'typeorm-rollback');
      await runner.rollbackTransaction();
      await runner.release();
      expect(await rowsOf('typeorm-rollback')).toBe(0);
    });

    it('pushInTransaction(manager): committed -> a row, rolled back -> none, bad options -> typed error', async () => {
      await throughWriter('typeorm', (work) => dataSource.transaction(work), dataSource.manager);
    });

    it('refuses the data source manager (not-in-transaction) and a manager whose transaction ended (closed)', async () => {
      expect(adapterFor(dataSource.manager)).toBe(typeormAdapter);
      const error = await refusal(
        () => typeormAdapter.assertUsable(dataSource.manager),
        'not-in-transaction',
        'typeorm',
      );
      expect(error.message).toContain('dataSource.transaction(async (manager) => ...)');
      let escaped: object | undefined;
      await dataSource.transaction((manager) => {
        escaped = manager;
        return Promise.resolve();
      });
      await refusal(() => typeormAdapter.assertUsable(escaped!), 'closed', 'typeorm');
    });
  });

  describe('Prisma', () => {
    // The client is generated from test/outbox/prisma/schema.prisma into its git-ignored
    // ./generated on each run (offline: the schema engine, which `generate` does not use, is
    // pointed at a stand-in so the CLI does not download it), then loaded with the pg adapter.
    let prisma: {
      $transaction<T>(work: (tx: object) => Promise<T>): Promise<T>;
      $disconnect(): Promise<void>;
    } & object;

    beforeAll(() => {
      const dir = join(__dirname, 'prisma');
      execFileSync(
        process.execPath,
        [require.resolve('prisma/build/index.js'), 'generate', '--schema', join(dir, 'schema.prisma')],
        {
          stdio: 'pipe',
          env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
        },
      );
      // Jest runs CommonJS and maps no `./x.js` specifier to its `./x.ts`: the generated files
      // are compiled next to themselves (the `import()` of the query compiler becoming a require).
      const generated = join(dir, 'generated');
      for (const file of readdirSync(generated, { recursive: true, encoding: 'utf8' }).filter((f) =>
        f.endsWith('.ts'),
      )) {
        const source = readFileSync(join(generated, file), 'utf8');
        const compiled = ts.transpileModule(source, {
          compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
        });
        writeFileSync(join(generated, file.replace(/\.ts$/, '.js')), compiled.outputText);
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { PrismaClient } = require(join(generated, 'client.js')) as {
        PrismaClient: new (options: object) => typeof prisma;
      };
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { PrismaPg } = require('@prisma/adapter-pg') as { PrismaPg: new (options: object) => object };
      prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: pg.url, max: 3 }) });
    }, 60_000);
    afterAll(() => prisma?.$disconnect());

    it('writes through the tx of $transaction(): seen after commit', async () => {
      const rows = await prisma.$transaction(async (tx) => {
        const [adapter, written] = await write(tx, 'prisma-commit');
        expect(adapter).toBe(prismaAdapter);
        return written;
      });
      expect(rows).toHaveLength(1);
      expect(await rowsOf('prisma-commit')).toBe(1);
    });

    it('writes nothing when the transaction rolls back', async () => {
      await rolledBack(() =>
        prisma.$transaction(async (tx) => {
          await write(tx, 'prisma-rollback');
          throw new Rollback();
        }),
      );
      expect(await rowsOf('prisma-rollback')).toBe(0);
    });

    it('pushInTransaction(tx): committed -> a row, rolled back -> none, bad options -> typed error', async () => {
      await throughWriter('prisma', (work) => prisma.$transaction(work), prisma);
    });

    it('pushInTransaction with a tx whose transaction ended: closed, nothing written', async () => {
      let escaped: object | undefined;
      await prisma.$transaction((tx) => {
        escaped = tx;
        return Promise.resolve();
      });
      const topic = uniqueTopic('prisma');
      await refusal(() => queue.pushInTransaction(escaped!, topic, 1), 'closed', 'prisma');
      expect(await messageIdsOf(topic)).toEqual([]);
    });

    it('refuses the root client (not-in-transaction) and recognizes the error of an ended tx (closed)', async () => {
      expect(adapterFor(prisma)).toBe(prismaAdapter);
      const error = await refusal(() => prismaAdapter.assertUsable(prisma), 'not-in-transaction', 'prisma');
      expect(error.message).toContain('prisma.$transaction(async (tx) => ...)');
      let escaped: object | undefined;
      await prisma.$transaction((tx) => {
        escaped = tx;
        return Promise.resolve();
      });
      let thrown: unknown;
      await prismaAdapter.query(escaped!, insert('prisma-closed')).catch((caught: unknown) => (thrown = caught));
      expect(thrown).toBeDefined();
      expect(prismaAdapter.closedError!(thrown)).toBe(true);
      expect(prismaAdapter.closedError!(new Error('relation does not exist'))).toBe(false);
      expect(await rowsOf('prisma-closed')).toBe(0);
    });
  });

  describe('MikroORM', () => {
    let orm: MikroORM;
    const OutboxRow = new EntitySchema({
      name: 'OutboxRow',
      tableName: 'redis_ack_queue_outbox',
      properties: { id: { type: 'bigint', primary: true } },
    });

    beforeAll(async () => {
      orm = await MikroORM.init({ clientUrl: pg.url, entities: [OutboxRow], pool: { max: 3 } });
    });
    afterAll(() => orm?.close(true));

    it('writes through the em of transactional(): seen after commit', async () => {
      const rows = await orm.em.fork().transactional(async (em) => {
        const [adapter, written] = await write(em, 'mikro-commit');
        expect(adapter).toBe(mikroOrmAdapter);
        expect(await rowsOf('mikro-commit')).toBe(0);
        return written;
      });
      expect(rows).toHaveLength(1);
      expect(await rowsOf('mikro-commit')).toBe(1);
    });

    it('writes nothing when the transaction rolls back', async () => {
      await rolledBack(() =>
        orm.em.fork().transactional(async (em) => {
          await write(em, 'mikro-rollback');
          throw new Rollback();
        }),
      );
      expect(await rowsOf('mikro-rollback')).toBe(0);
    });

    it('pushInTransaction(em): committed -> a row, rolled back -> none, bad options -> typed error', async () => {
      await throughWriter('mikro-orm', (work) => orm.em.fork().transactional(work), orm.em.fork());
    });

    it('refuses an em outside a transaction (not-in-transaction) and one whose transaction ended', async () => {
      const em = orm.em.fork();
      expect(adapterFor(em)).toBe(mikroOrmAdapter);
      const error = await refusal(() => mikroOrmAdapter.assertUsable(em), 'not-in-transaction', 'mikro-orm');
      expect(error.message).toContain('em.transactional(async (em) => ...)');
      let escaped: object | undefined;
      await orm.em.fork().transactional((inner) => {
        escaped = inner;
        return Promise.resolve();
      });
      // Its transaction context (a Kysely ControlledTransaction in MikroORM 7) says committed.
      await refusal(() => mikroOrmAdapter.assertUsable(escaped!), 'closed', 'mikro-orm');
      let thrown: unknown;
      await mikroOrmAdapter.query(escaped!, insert('mikro-closed')).catch((caught: unknown) => (thrown = caught));
      expect(mikroOrmAdapter.closedError!(thrown)).toBe(true);
      expect(await rowsOf('mikro-closed')).toBe(0);
    });
  });

  describe('Drizzle', () => {
    let pool: Pool;
    let db: ReturnType<typeof drizzle>;

    beforeAll(() => {
      pool = new Pool({ ...pg.poolOptions, max: 3 });
      db = drizzle(pool);
    });
    afterAll(() => pool?.end());

    it('writes through the tx of db.transaction(): seen after commit', async () => {
      const rows = await db.transaction(async (tx) => {
        const [adapter, written] = await write(tx, 'drizzle-commit');
        expect(adapter).toBe(drizzleAdapter);
        expect(await rowsOf('drizzle-commit')).toBe(0);
        return written;
      });
      expect(rows).toEqual([{ id: expect.any(String) as unknown }]);
      expect(await rowsOf('drizzle-commit')).toBe(1);
    });

    it('writes nothing when the transaction rolls back', async () => {
      await rolledBack(() =>
        db.transaction(async (tx) => {
          await write(tx, 'drizzle-rollback');
          throw new Rollback();
        }),
      );
      expect(await rowsOf('drizzle-rollback')).toBe(0);
    });

    it('pushInTransaction(tx): committed -> a row, rolled back -> none, bad options -> typed error', async () => {
      await throughWriter('drizzle', (work) => db.transaction(work), db);
    });

    it('refuses the root db (not-in-transaction) and a MySQL db (wrong-database); an ended tx writes nothing', async () => {
      expect(adapterFor(db)).toBe(drizzleAdapter);
      const error = await refusal(() => drizzleAdapter.assertUsable(db), 'not-in-transaction', 'drizzle');
      expect(error.message).toContain('db.transaction(async (tx) => ...)');
      const mysql = drizzleMysqlProxy(() => Promise.resolve({ rows: [] }));
      expect(adapterFor(mysql)).toBe(drizzleAdapter);
      await refusal(() => drizzleAdapter.assertUsable(mysql), 'wrong-database', 'drizzle');
      // Drizzle keeps no state on an ended tx: query() finds its pooled client outside a block.
      let escaped: object | undefined;
      await db.transaction((tx) => {
        escaped = tx;
        return Promise.resolve();
      });
      drizzleAdapter.assertUsable(escaped!);
      await refusal(() => drizzleAdapter.query(escaped!, insert('drizzle-closed')), 'closed', 'drizzle');
      expect(await rowsOf('drizzle-closed')).toBe(0);
    });
  });

  describe('Kysely', () => {
    let db: Kysely<unknown>;

    beforeAll(() => {
      db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new Pool({ ...pg.poolOptions, max: 3 }) }) });
    });
    afterAll(() => db?.destroy());

    it('writes through the trx of transaction().execute(): seen after commit', async () => {
      const rows = await db.transaction().execute(async (trx) => {
        const [adapter, written] = await write(trx, 'kysely-commit');
        expect(adapter).toBe(kyselyAdapter);
        expect(await rowsOf('kysely-commit')).toBe(0);
        return written;
      });
      expect(rows).toEqual([{ id: expect.any(String) as unknown }]);
      expect(await rowsOf('kysely-commit')).toBe(1);
    });

    it('writes through a ControlledTransaction; refuses it once committed or rolled back', async () => {
      const committed = await db.startTransaction().execute();
      await write(committed, 'kysely-controlled');
      await committed.commit().execute();
      expect(await rowsOf('kysely-controlled')).toBe(1);
      await refusal(() => kyselyAdapter.assertUsable(committed), 'closed', 'kysely');
      const rolled = await db.startTransaction().execute();
      await write(rolled, 'kysely-controlled');
      await rolled.rollback().execute();
      await refusal(() => kyselyAdapter.assertUsable(rolled), 'closed', 'kysely');
      expect(await rowsOf('kysely-controlled')).toBe(1);
    });

    it('writes nothing when the transaction rolls back', async () => {
      await rolledBack(() =>
        db.transaction().execute(async (trx) => {
          await write(trx, 'kysely-rollback');
          throw new Rollback();
        }),
      );
      expect(await rowsOf('kysely-rollback')).toBe(0);
    });

    it('pushInTransaction(trx): committed -> a row, rolled back -> none, bad options -> typed error', async () => {
      await throughWriter('kysely', (work) => db.transaction().execute(work), db);
    });

    it('pushInTransaction with a trx kept past its execute(): closed, nothing written', async () => {
      let escaped: object | undefined;
      await db.transaction().execute((trx) => {
        escaped = trx;
        return Promise.resolve();
      });
      const topic = uniqueTopic('kysely');
      await refusal(() => queue.pushInTransaction(escaped!, topic, 1), 'closed', 'kysely');
      expect(await messageIdsOf(topic)).toEqual([]);
    });

    it('lets a trx kept past its execute() fail, an error closedError recognizes', async () => {
      let escaped: object | undefined;
      await db.transaction().execute((trx) => {
        escaped = trx;
        return Promise.resolve();
      });
      kyselyAdapter.assertUsable(escaped!);
      let thrown: unknown;
      await kyselyAdapter.query(escaped!, insert('kysely-closed')).catch((caught: unknown) => (thrown = caught));
      expect(kyselyAdapter.closedError!(thrown)).toBe(true);
      expect(kyselyAdapter.closedError!(new Error('relation does not exist'))).toBe(false);
      expect(await rowsOf('kysely-closed')).toBe(0);
    });

    it('refuses the root db (not-in-transaction) and a SQLite db (wrong-database)', async () => {
      expect(adapterFor(db)).toBe(kyselyAdapter);
      const error = await refusal(() => kyselyAdapter.assertUsable(db), 'not-in-transaction', 'kysely');
      expect(error.message).toContain('db.transaction().execute(async (trx) => ...)');
      const sqlite = new Kysely<unknown>({ dialect: new SqliteDialect({ database: {} as never }) });
      expect(adapterFor(sqlite)).toBe(kyselyAdapter);
      await refusal(() => kyselyAdapter.assertUsable(sqlite), 'wrong-database', 'kysely');
    });
  });

  describe('pg', () => {
    let pool: Pool;

    beforeAll(() => {
      pool = new Pool({ ...pg.poolOptions, max: 3 });
    });
    afterAll(() => pool?.end());

    it('writes through a PoolClient after BEGIN: seen after COMMIT; ROLLBACK writes nothing', async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const [adapter, rows] = await write(client, 'pg-commit');
        expect(adapter).toBe(pgAdapter);
        expect(rows).toHaveLength(1);
        await client.query('COMMIT');
        await client.query('BEGIN');
        await write(client, 'pg-rollback');
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      expect(await rowsOf('pg-commit')).toBe(1);
      expect(await rowsOf('pg-rollback')).toBe(0);
    });

    it("lets the writer's block check fail on a client without BEGIN (25P01); refuses an ended client (closed)", async () => {
      const client = new Client(pg.poolOptions);
      await client.connect();
      try {
        expect(adapterFor(client)).toBe(pgAdapter);
        pgAdapter.assertUsable(client);
        await expect(pgAdapter.query(client, { sql: table.inBlockCheck(), params: [] })).rejects.toMatchObject({
          code: '25P01',
        });
        await client.query('BEGIN');
        expect(await pgAdapter.query(client, { sql: table.inBlockCheck(), params: [] })).toEqual([]);
        await client.query('ROLLBACK');
      } finally {
        await client.end();
      }
      await refusal(() => pgAdapter.assertUsable(client), 'closed', 'pg');
    });

    it('pushInTransaction(client): committed -> a row, rolled back -> none, bad options -> typed error', async () => {
      const client = await pool.connect();
      try {
        const inTransaction = async <T>(work: (tx: object) => Promise<T>): Promise<T> => {
          await client.query('BEGIN');
          try {
            const result = await work(client);
            await client.query('COMMIT');
            return result;
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        };
        await throughWriter('pg', inTransaction, pool);
        // A client without BEGIN: the writer's block check refuses it.
        const topic = uniqueTopic('pg');
        await refusal(() => queue.pushInTransaction(client, topic, 1), 'not-in-transaction', 'pg');
        expect(await messageIdsOf(topic)).toEqual([]);
      } finally {
        client.release();
      }
    });

    it('refuses a Pool (not-in-transaction) with the way to get a client', async () => {
      expect(adapterFor(pool)).toBe(pgAdapter);
      const error = await refusal(() => pgAdapter.assertUsable(pool), 'not-in-transaction', 'pg');
      expect(error.message).toContain('pool.connect(), BEGIN, then pass the client');
    });
  });
});
