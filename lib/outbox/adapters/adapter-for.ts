import { OutboxTransactionError } from '../../errors';
import type { OutboxAdapter } from './outbox-adapter';

// Placeholder until the adapters land: a pg client only.
const pgClient: OutboxAdapter = {
  library: 'pg',
  recognizes: (tx) => typeof (tx as { query?: unknown }).query === 'function',
  assertUsable: () => undefined,
  query: async (tx, { sql, params }) =>
    (
      await (tx as { query(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }> }).query(
        sql,
        params,
      )
    ).rows,
};

/** The adapter of the library `tx` belongs to. */
export function adapterFor(tx: unknown): OutboxAdapter {
  if (typeof tx === 'object' && tx !== null && pgClient.recognizes(tx)) return pgClient;
  throw new OutboxTransactionError('unknown', undefined, 'pass a pg client inside BEGIN');
}
