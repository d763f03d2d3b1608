import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter, OutboxStatement } from './outbox-adapter';
import { field, hasFunction, objectField } from './shape';

const LIBRARY = 'pg';
const PASS = 'pool.connect(), BEGIN, then pass the client';

const isClient = (tx: object) => hasFunction(tx, 'query') && objectField(tx, 'connectionParameters') !== undefined;
const isPool = (tx: object) =>
  hasFunction(tx, 'query') && hasFunction(tx, 'connect') && typeof field(tx, 'totalCount') === 'number';

/**
 * node-postgres (pg 8): a `Client` or a `PoolClient` after `BEGIN`. Whether BEGIN was sent cannot
 * be read from the client: the writer asks PostgreSQL first (OutboxTable.inBlockCheck()).
 */
export const pgAdapter: OutboxAdapter = {
  library: LIBRARY,
  blockUnknown: true,

  recognizes: (tx) => isClient(tx) || isPool(tx),

  assertUsable(tx) {
    if (!isClient(tx)) throw new OutboxTransactionError('not-in-transaction', LIBRARY, PASS);
    if (field(tx, '_ending') === true || field(tx, '_ended') === true)
      throw new OutboxTransactionError('closed', LIBRARY, PASS);
  },

  async query(tx, statement: OutboxStatement) {
    const client = tx as { query(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }> };
    return (await client.query(statement.sql, statement.params)).rows;
  },
};
