/**
 * Asks the connection whether it is inside a transaction block, for the libraries whose objects
 * cannot tell (a `pg` client without BEGIN, a Drizzle tx whose transaction ended). Sent without
 * parameters, so over the simple protocol: outside a block the statement is its own implicit
 * transaction and both clocks are equal. (A parameterized statement cannot ask this: over the
 * extended protocol the implicit transaction starts at Parse, before the statement's own clock.)
 */
export const IN_TRANSACTION_BLOCK_SQL = 'SELECT statement_timestamp() <> transaction_timestamp() AS in_block';

/** Whether the rows of IN_TRANSACTION_BLOCK_SQL say "outside a block" (anything else: inside, so nothing is refused wrongly). */
export function saysOutsideBlock(rows: unknown): boolean {
  const row: unknown = Array.isArray(rows) ? rows[0] : undefined;
  return typeof row === 'object' && row !== null && (row as { in_block?: unknown }).in_block === false;
}
