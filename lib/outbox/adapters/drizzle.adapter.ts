import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter, OutboxStatement } from './outbox-adapter';
import { loadOutboxPeer } from './load-peer';
import { field, objectField } from './shape';
import { IN_TRANSACTION_BLOCK_SQL, saysOutsideBlock } from './transaction-block';

const LIBRARY = 'drizzle';
const PASS = 'pass the tx of db.transaction(async (tx) => ...)';

// Drizzle names each of its classes under this symbol (`PgTransaction`, `NodePgDatabase`...).
const ENTITY_KIND = Symbol.for('drizzle:entityKind');

/** The drizzle class name of an object (its constructor's entity kind), or undefined. */
function kindOf(value: object | undefined): string | undefined {
  const kind = value?.constructor ? field(value.constructor, ENTITY_KIND) : undefined;
  return typeof kind === 'string' ? kind : undefined;
}

/** The subset of drizzle-orm the adapter uses. */
interface DrizzleSql {
  sql: {
    empty(): DrizzleChunk;
    raw(text: string): DrizzleChunk;
    param(value: unknown): DrizzleChunk;
    join(chunks: DrizzleChunk[]): DrizzleChunk;
  };
}
type DrizzleChunk = object;

/** The statement as a drizzle `sql` object: its text in raw pieces, each `$n` a bound parameter. */
function toDrizzleSql(drizzle: DrizzleSql, statement: OutboxStatement): DrizzleChunk {
  const chunks: DrizzleChunk[] = [];
  let last = 0;
  for (const match of statement.sql.matchAll(/\$(\d+)/g)) {
    chunks.push(drizzle.sql.raw(statement.sql.slice(last, match.index)));
    chunks.push(drizzle.sql.param(statement.params[Number(match[1]) - 1]));
    last = match.index + match[0].length;
  }
  chunks.push(drizzle.sql.raw(statement.sql.slice(last)));
  return drizzle.sql.join(chunks);
}

/** Drizzle (drizzle-orm 0.3x-0.4x, a PostgreSQL driver): the tx of `db.transaction()`. */
export const drizzleAdapter: OutboxAdapter = {
  library: LIBRARY,

  recognizes: (tx) => /(Database|Transaction)$/.test(kindOf(tx) ?? '') && objectField(tx, 'dialect') !== undefined,

  assertUsable(tx) {
    if (kindOf(objectField(tx, 'dialect')) !== 'PgDialect')
      throw new OutboxTransactionError('wrong-database', LIBRARY, PASS);
    if (!(kindOf(tx) ?? '').endsWith('Transaction'))
      throw new OutboxTransactionError('not-in-transaction', LIBRARY, PASS);
  },

  async query(tx, statement: OutboxStatement) {
    const drizzle = loadOutboxPeer<DrizzleSql>('drizzle-orm', 'pushInTransaction() with a Drizzle transaction');
    const execute = (query: DrizzleChunk) => (tx as { execute(query: DrizzleChunk): Promise<unknown> }).execute(query);
    // Drizzle keeps no state on a tx whose transaction ended: its client went back to the pool,
    // so the server is asked (one round trip) before the statement runs there.
    if (saysOutsideBlock(rowsOf(await execute(drizzle.sql.raw(IN_TRANSACTION_BLOCK_SQL)))))
      throw new OutboxTransactionError('closed', LIBRARY, PASS);
    return rowsOf(await execute(toDrizzleSql(drizzle, statement)));
  },
};

/** The rows of a drizzle `execute` result. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  // node-postgres resolves to a QueryResult ({ rows }); postgres.js and others to the rows themselves.
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = typeof result === 'object' && result !== null ? field(result, 'rows') : undefined;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
