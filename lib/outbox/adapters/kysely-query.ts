import type { OutboxStatement } from './outbox-adapter';
import { loadOutboxPeer } from './load-peer';

/** A Kysely transaction (or a MikroORM 7 transaction context, which is one): runs compiled queries. */
export interface KyselyExecutor {
  executeQuery(query: unknown): Promise<{ rows: Record<string, unknown>[] }>;
}

/** Runs the statement through a Kysely executor, its parameters bound (`$n`: Kysely's PostgreSQL placeholders). */
export async function kyselyQuery(
  executor: KyselyExecutor,
  statement: OutboxStatement,
): Promise<Record<string, unknown>[]> {
  const { CompiledQuery } = loadOutboxPeer<{ CompiledQuery: { raw(sql: string, params: unknown[]): unknown } }>(
    'kysely',
    'pushInTransaction() with a Kysely or MikroORM transaction',
  );
  const result = await executor.executeQuery(CompiledQuery.raw(statement.sql, statement.params));
  return result.rows;
}

/** Whether Kysely refused a transaction that had ended (a trx kept past its `execute()` callback). */
export function isKyselyClosedError(error: unknown): boolean {
  return error instanceof Error && /^Transaction is already (committed|rolled back)/.test(error.message);
}
