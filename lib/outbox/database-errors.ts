/** PostgreSQL's SQLSTATE for a table that does not exist. */
export const UNDEFINED_TABLE = '42P01';
/** PostgreSQL's SQLSTATE for a statement that needs a transaction block run outside one. */
export const NO_ACTIVE_TRANSACTION = '25P01';

/**
 * The SQLSTATE of a database error as any of the libraries wraps it: pg's `code`, TypeORM's
 * `driverError`, Drizzle's and Kysely's `cause`, Prisma's `meta.code` / `originalCode`.
 */
export function sqlStateOf(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 4) return undefined;
  const record = error as Record<string, unknown>;
  for (const field of ['code', 'originalCode', 'sqlState']) {
    const value = record[field];
    if (typeof value === 'string' && /^[0-9A-Z]{5}$/.test(value)) return value;
  }
  const meta = record.meta as Record<string, unknown> | undefined;
  if (meta && typeof meta.code === 'string' && /^[0-9A-Z]{5}$/.test(meta.code)) return meta.code;
  for (const field of ['driverError', 'cause', 'original', 'error']) {
    const found = sqlStateOf(record[field], depth + 1);
    if (found) return found;
  }
  // Libraries that keep no code (MikroORM's exceptions, Prisma's raw errors) keep PostgreSQL's text.
  const message = typeof record.message === 'string' ? record.message : '';
  if (/relation "[^"]*" does not exist/.test(message)) return UNDEFINED_TABLE;
  return undefined;
}

/**
 * A database error's first line, for an error text or a log: its SQLSTATE and message, cut to 200
 * characters, a quoted value replaced (a driver may quote a value it refused, which may be the
 * app's data) and nothing of a connection string (it may hold a password).
 */
export function redactedReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = (message.split('\n').find((text) => text.trim() !== '') ?? '').trim();
  const safe = line
    .replace(/postgres(ql)?:\/\/\S+/g, 'postgres://...')
    .replace(/"[^"]*"/g, (quoted) => (/^"[a-z_][a-z0-9_.]*"$/.test(quoted) ? quoted : '"..."'))
    .replace(/'[^']*'/g, "'...'")
    .slice(0, 200);
  const state = sqlStateOf(error);
  return state ? `${state} ${safe}` : safe || 'unknown error';
}
