import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter, OutboxStatement } from './outbox-adapter';
import { field, hasFunction, objectField } from './shape';

const LIBRARY = 'prisma';
const PASS = 'pass the tx of prisma.$transaction(async (tx) => ...)';

// Prisma 7 marks an interactive transaction's client with this (its root client has none).
const SCOPE = Symbol.for('prisma.client.transaction.scope_context');

/** Whether the client is an interactive transaction's: marked (Prisma 7), or without `$transaction` (before). */
function isTransactionClient(tx: object): boolean {
  const scope = objectField(tx, SCOPE);
  if (scope) return field(scope, 'kind') === 'nested';
  return !hasFunction(tx, '$transaction');
}

/** Prisma 7 (and 5-6): the client of `prisma.$transaction(async (tx) => ...)`, on PostgreSQL. */
export const prismaAdapter: OutboxAdapter = {
  library: LIBRARY,

  recognizes: (tx) => hasFunction(tx, '$queryRawUnsafe') && hasFunction(tx, '$executeRawUnsafe'),

  assertUsable(tx) {
    const provider = field(tx, '_activeProvider');
    if (typeof provider === 'string' && provider !== 'postgresql')
      throw new OutboxTransactionError('wrong-database', LIBRARY, PASS);
    if (!isTransactionClient(tx)) throw new OutboxTransactionError('not-in-transaction', LIBRARY, PASS);
  },

  async query(tx, statement: OutboxStatement) {
    const client = tx as { $queryRawUnsafe(sql: string, ...values: unknown[]): Promise<Record<string, unknown>[]> };
    return await client.$queryRawUnsafe(statement.sql, ...statement.params);
  },

  // A transaction client used after its transaction ended: Prisma's P2028 (or its text, before codes).
  closedError(error) {
    if (typeof error !== 'object' || error === null) return false;
    if (field(error, 'code') === 'P2028') return true;
    const message = field(error, 'message');
    return typeof message === 'string' && /Transaction (already closed|not found)/i.test(message);
  },
};
