import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter, OutboxStatement } from './outbox-adapter';
import { isKyselyClosedError, type KyselyExecutor, kyselyQuery } from './kysely-query';
import { field, hasFunction, objectField } from './shape';

const LIBRARY = 'kysely';
const PASS = 'pass the trx of db.transaction().execute(async (trx) => ...), or an open db.startTransaction()';

/** The dialect's adapter's class name (`PostgresAdapter`...), when Kysely lets it be read. */
function adapterName(tx: object): string | undefined {
  if (!hasFunction(tx, 'getExecutor')) return undefined;
  const executor = (tx as { getExecutor(): unknown }).getExecutor();
  const adapter = typeof executor === 'object' && executor !== null ? objectField(executor, 'adapter') : undefined;
  return adapter?.constructor?.name;
}

/** Kysely (0.27+, a PostgreSQL dialect): the trx of `transaction().execute()`, or an open ControlledTransaction. */
export const kyselyAdapter: OutboxAdapter = {
  library: LIBRARY,

  recognizes: (tx) =>
    typeof field(tx, 'isTransaction') === 'boolean' &&
    hasFunction(tx, 'executeQuery') &&
    hasFunction(tx, 'selectFrom') &&
    hasFunction(tx, 'transaction'),

  assertUsable(tx) {
    // Only the dialects known not to be PostgreSQL are refused: PGlite's and others extend its adapter.
    if (/mysql|sqlite|mssql/i.test(adapterName(tx) ?? ''))
      throw new OutboxTransactionError('wrong-database', LIBRARY, PASS);
    if (field(tx, 'isTransaction') !== true) throw new OutboxTransactionError('not-in-transaction', LIBRARY, PASS);
    if (field(tx, 'isCommitted') === true || field(tx, 'isRolledBack') === true)
      throw new OutboxTransactionError('closed', LIBRARY, PASS);
  },

  query: (tx, statement: OutboxStatement) => kyselyQuery(tx as KyselyExecutor, statement),

  closedError: isKyselyClosedError,
};
