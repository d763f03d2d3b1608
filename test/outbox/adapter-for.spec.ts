import { OutboxTransactionError, type OutboxTransactionReason } from '../../lib/errors';
import { adapterFor } from '../../lib/outbox/adapters/adapter-for';

/**
 * adapterFor's shape recognition with plain stand-ins, for what the real libraries of
 * adapters.int-spec.ts cannot show without another database: the wrong-database refusals and the
 * objects of libraries the outbox does not know.
 */

const fn = () => undefined;

/** The reason assertUsable refuses `tx` with, or undefined when it accepts it. */
function refusedFor(tx: object): OutboxTransactionReason | undefined {
  try {
    adapterFor(tx).assertUsable(tx);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboxTransactionError);
    return (error as OutboxTransactionError).reason;
  }
}

const typeormManager = (type: string, runner?: object) => ({
  '@instanceof': Symbol.for('EntityManager'),
  connection: { options: { type } },
  queryRunner: runner,
});
const typeormRunner = (active: boolean, released = false) => ({
  isTransactionActive: active,
  isReleased: released,
  startTransaction: fn,
  query: fn,
  connection: { options: { type: 'postgres' } },
});

describe('adapterFor (shapes)', () => {
  it.each([
    ['a TypeORM manager in a transaction', typeormManager('postgres', typeormRunner(true)), 'typeorm', undefined],
    ['a TypeORM manager on MySQL', typeormManager('mysql', typeormRunner(true)), 'typeorm', 'wrong-database'],
    ['a TypeORM root manager', typeormManager('postgres'), 'typeorm', 'not-in-transaction'],
    ['a released TypeORM runner', typeormRunner(false, true), 'typeorm', 'closed'],
    [
      'a Prisma 7 tx client',
      {
        $queryRawUnsafe: fn,
        $executeRawUnsafe: fn,
        $transaction: fn,
        _activeProvider: 'postgresql',
        [Symbol.for('prisma.client.transaction.scope_context')]: { kind: 'nested' },
      },
      'prisma',
      undefined,
    ],
    ['a Prisma 6 tx client', { $queryRawUnsafe: fn, $executeRawUnsafe: fn }, 'prisma', undefined],
    [
      'a Prisma root client',
      { $queryRawUnsafe: fn, $executeRawUnsafe: fn, $transaction: fn, _activeProvider: 'postgresql' },
      'prisma',
      'not-in-transaction',
    ],
    [
      'a Prisma client on MySQL',
      { $queryRawUnsafe: fn, $executeRawUnsafe: fn, _activeProvider: 'mysql' },
      'prisma',
      'wrong-database',
    ],
    [
      'a MikroORM em on SQLite',
      {
        isInTransaction: (): boolean => true,
        getTransactionContext: () => ({ executeQuery: fn }),
        transactional: fn,
        getConnection: fn,
        getPlatform: () => new (class SqlitePlatform {})(),
      },
      'mikro-orm',
      'wrong-database',
    ],
    [
      'a MikroORM 6 em (a Knex transaction context)',
      {
        isInTransaction: (): boolean => true,
        getTransactionContext: () => ({ raw: fn }),
        transactional: fn,
        getConnection: fn,
      },
      'mikro-orm',
      'unknown',
    ],
    [
      'a Kysely trx on MySQL',
      {
        isTransaction: true,
        executeQuery: fn,
        selectFrom: fn,
        transaction: fn,
        getExecutor: () => ({ adapter: new (class MysqlAdapter {})() }),
      },
      'kysely',
      'wrong-database',
    ],
    ['a pg client', { query: fn, connectionParameters: {} }, 'pg', undefined],
    ['an ended pg client', { query: fn, connectionParameters: {}, _ending: true }, 'pg', 'closed'],
    ['a pg pool', { query: fn, connect: fn, totalCount: 0 }, 'pg', 'not-in-transaction'],
  ])('%s -> %s, %s', (_name, tx, library, reason) => {
    expect(adapterFor(tx).library).toBe(library);
    expect(refusedFor(tx)).toBe(reason);
  });

  it.each([
    ['a Sequelize transaction', { commit: fn, rollback: fn, afterCommit: fn, sequelize: {} }],
    ['a Knex transaction', Object.assign(fn.bind(null), { raw: fn, commit: fn, rollback: fn, isTransaction: true })],
    ['a plain object', {}],
    ['an array', []],
  ])('%s -> unknown', (_name, tx) => {
    let caught: unknown;
    try {
      adapterFor(tx);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OutboxTransactionError);
    expect(caught).toMatchObject({ reason: 'unknown', library: undefined });
  });
});
