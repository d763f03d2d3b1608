import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter, OutboxStatement } from './outbox-adapter';
import { isKyselyClosedError, type KyselyExecutor, kyselyQuery } from './kysely-query';
import { field, hasFunction } from './shape';

const LIBRARY = 'mikro-orm';
const PASS = 'pass the em of em.transactional(async (em) => ...)';

/** The platform's class name (`PostgreSqlPlatform`...). */
function platformName(tx: object): string | undefined {
  if (!hasFunction(tx, 'getPlatform')) return undefined;
  const platform = (tx as { getPlatform(): unknown }).getPlatform();
  return typeof platform === 'object' && platform !== null ? platform.constructor?.name : undefined;
}

/** The transaction context: in MikroORM 7 a Kysely transaction of the em's connection. */
function contextOf(tx: object): unknown {
  return (tx as { getTransactionContext(): unknown }).getTransactionContext();
}

/**
 * MikroORM 7 (`@mikro-orm/postgresql`): an EntityManager inside `em.transactional()`. The
 * statement runs on its transaction context with bound parameters (the connection's `execute`
 * would inline them as literals, arrays as lists).
 */
export const mikroOrmAdapter: OutboxAdapter = {
  library: LIBRARY,

  recognizes: (tx) =>
    hasFunction(tx, 'isInTransaction') &&
    hasFunction(tx, 'getTransactionContext') &&
    hasFunction(tx, 'transactional') &&
    hasFunction(tx, 'getConnection'),

  assertUsable(tx) {
    const platform = platformName(tx);
    if (platform !== undefined && !/postgre/i.test(platform))
      throw new OutboxTransactionError('wrong-database', LIBRARY, PASS);
    const context = contextOf(tx);
    if (!(tx as { isInTransaction(): boolean }).isInTransaction() || typeof context !== 'object' || context === null)
      throw new OutboxTransactionError('not-in-transaction', LIBRARY, PASS);
    // MikroORM 6 kept a Knex transaction here: not supported (its raw bindings expand arrays).
    if (!hasFunction(context, 'executeQuery'))
      throw new OutboxTransactionError('unknown', LIBRARY, 'MikroORM 7 or newer is needed');
    if (field(context, 'isCommitted') === true || field(context, 'isRolledBack') === true)
      throw new OutboxTransactionError('closed', LIBRARY, PASS);
  },

  query: (tx, statement: OutboxStatement) => kyselyQuery(contextOf(tx) as KyselyExecutor, statement),

  closedError: isKyselyClosedError,
};
