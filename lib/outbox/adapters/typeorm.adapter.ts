import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter, OutboxStatement } from './outbox-adapter';
import { field, hasFunction, objectField } from './shape';

const LIBRARY = 'typeorm';
const PASS =
  'pass the manager of dataSource.transaction(async (manager) => ...), or a QueryRunner after startTransaction()';

// TypeORM marks its managers (0.3 and 1.x) with this symbol; a QueryRunner is told by its shape.
const ENTITY_MANAGER = Symbol.for('EntityManager');

const isEntityManager = (tx: object) => field(tx, '@instanceof') === ENTITY_MANAGER;
const isQueryRunner = (tx: object) =>
  typeof field(tx, 'isTransactionActive') === 'boolean' &&
  typeof field(tx, 'isReleased') === 'boolean' &&
  hasFunction(tx, 'startTransaction') &&
  hasFunction(tx, 'query');

/** The runner a statement goes through: the runner itself, or the manager's (undefined outside a transaction). */
function runnerOf(tx: object): object | undefined {
  return isEntityManager(tx) ? objectField(tx, 'queryRunner') : tx;
}

/**
 * TypeORM (0.3 and 1.x, the `postgres` driver): an `EntityManager` inside
 * `dataSource.transaction()`, or a `QueryRunner` after `startTransaction()`.
 */
export const typeormAdapter: OutboxAdapter = {
  library: LIBRARY,

  recognizes: (tx) => isEntityManager(tx) || isQueryRunner(tx),

  assertUsable(tx) {
    const dataSource = objectField(tx, 'connection') ?? objectField(tx, 'dataSource');
    const type = dataSource && field(objectField(dataSource, 'options') ?? {}, 'type');
    if (type !== undefined && type !== 'postgres') throw new OutboxTransactionError('wrong-database', LIBRARY, PASS);
    const runner = runnerOf(tx);
    if (!runner) throw new OutboxTransactionError('not-in-transaction', LIBRARY, PASS);
    if (field(runner, 'isReleased') === true) throw new OutboxTransactionError('closed', LIBRARY, PASS);
    // A manager's runner stays set after its transaction() ended; it is released then (above).
    if (field(runner, 'isTransactionActive') !== true)
      throw new OutboxTransactionError(isEntityManager(tx) ? 'closed' : 'not-in-transaction', LIBRARY, PASS);
  },

  async query(tx, statement: OutboxStatement) {
    const runner = runnerOf(tx) as {
      query(sql: string, params: unknown[], structured: true): Promise<{ records?: Record<string, unknown>[] }>;
    };
    // The structured result: `records` for every command (a plain result is a pair for UPDATE/DELETE).
    const result = await runner.query(statement.sql, statement.params, true);
    return result.records ?? [];
  },
};
