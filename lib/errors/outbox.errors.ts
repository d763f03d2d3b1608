import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** An outbox call (`pushInTransaction`, `outboxStatus`...) on a service without the option `outbox`. */
export class OutboxNotConfiguredError extends RedisAckQueueError {
  /** Always `OUTBOX_NOT_CONFIGURED`. */
  readonly code = 'OUTBOX_NOT_CONFIGURED';
  /** @param operation - The call that needs the outbox, in the user's words. */
  constructor(readonly operation: string) {
    super(MESSAGES.outboxNotConfigured(operation));
  }
}

/**
 * Why a transaction object was refused: `unknown` (no library the outbox knows, or a non-object),
 * `not-in-transaction` (a library's object outside a transaction: its root client, a manager
 * outside `transaction()`, a `pg` client without `BEGIN`), `closed` (committed, rolled back or
 * released), `wrong-database` (a library connected to another database than PostgreSQL).
 */
export type OutboxTransactionReason = 'unknown' | 'not-in-transaction' | 'closed' | 'wrong-database';

/**
 * The `tx` given to `pushInTransaction` is not an open PostgreSQL transaction of a library the
 * outbox knows. Nothing was written. The text says which library it looked like and what to pass.
 */
export class OutboxTransactionError extends RedisAckQueueError {
  /** Always `OUTBOX_TRANSACTION`. */
  readonly code = 'OUTBOX_TRANSACTION';
  /**
   * @param reason - Why it was refused.
   * @param library - The library it looked like (`typeorm`, `prisma`...), or undefined.
   * @param hint - What to pass instead, in one sentence.
   */
  constructor(
    readonly reason: OutboxTransactionReason,
    readonly library: string | undefined,
    hint: string,
  ) {
    super(MESSAGES.outboxTransaction(reason, library, hint));
  }
}

/**
 * The outbox table (or its relays' table) does not exist in the database: run
 * `outboxMigrationSql(table)` (or the shipped `sql/outbox.sql`) once. A `pushInTransaction` that
 * met it has aborted the app's transaction, as any failed statement does in PostgreSQL.
 */
export class OutboxTableMissingError extends RedisAckQueueError {
  /** Always `OUTBOX_TABLE_MISSING`. */
  readonly code = 'OUTBOX_TABLE_MISSING';
  /** @param table - The table's name, as configured. */
  constructor(readonly table: string) {
    super(MESSAGES.outboxTableMissing(table));
  }
}

/**
 * The outbox's database refused a statement or could not be reached (`reason`: the driver's first
 * line, without credentials, values or parameters). A write that failed so has aborted the app's
 * transaction; the relay keeps its rows and tries again.
 */
export class OutboxDatabaseError extends RedisAckQueueError {
  /** Always `OUTBOX_DATABASE`. */
  readonly code = 'OUTBOX_DATABASE';
  /**
   * @param operation - The outbox call that failed, in the user's words.
   * @param reason - The driver's error code and first line, redacted.
   */
  constructor(
    readonly operation: string,
    readonly reason: string,
  ) {
    super(MESSAGES.outboxDatabase(operation, reason));
  }
}
