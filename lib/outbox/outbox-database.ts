import { OutboxDatabaseError, OutboxTableMissingError } from '../errors';
import { requirePeer } from '../observability/optional-peer';
import type { OutboxConnection } from '../interfaces';
import { redactedReason, sqlStateOf, UNDEFINED_TABLE } from './database-errors';
import type { OutboxTable } from './outbox-table';

/** The part of a `pg` client the outbox uses. */
export interface PgQueryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

/** A `pg` client checked out of the pool, or one of its own (LISTEN). */
export interface PgClient extends PgQueryable {
  release?(error?: Error | boolean): void;
  end?(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  connect?(): Promise<void>;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

interface PgPool extends PgQueryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'connect', listener: (client: PgClient) => void): unknown;
}

interface PgModule {
  Pool: new (options: Record<string, unknown>) => PgPool;
  Client: new (options: Record<string, unknown>) => PgClient;
}

/**
 * The outbox's own connection to its database (the relay's and outboxStatus's, never the app's
 * writes): a `pg` Pool opened on first use (`pg` is an optional peer, loaded then), with every
 * failure turned into OutboxTableMissingError or OutboxDatabaseError (redacted).
 */
export class OutboxDatabase {
  private pool: PgPool | undefined;

  constructor(
    private readonly connection: OutboxConnection,
    readonly table: OutboxTable,
  ) {}

  /** One statement on a pooled connection. */
  async query(operation: string, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    try {
      return (await this.open().query(sql, params)).rows;
    } catch (error) {
      throw this.failure(operation, error);
    }
  }

  /**
   * Runs `work` in a transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
   * throws (the error is passed on). A connection that broke meanwhile is discarded, not reused.
   */
  async transaction<T>(operation: string, work: (client: PgQueryable) => Promise<T>): Promise<T> {
    let client: PgClient;
    try {
      client = await this.open().connect();
    } catch (error) {
      throw this.failure(operation, error);
    }
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a connection that dies mid-batch (the
    // server killed) must fail this work, not crash the process with an unhandled 'error'.
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw this.failure(operation, error);
    } finally {
      client.removeListener?.('error', onError);
      client.release?.(broken ?? false);
    }
  }

  /** A connection of its own (for LISTEN), outside the pool; the caller ends it. */
  async dedicated(): Promise<PgClient> {
    const client = new (loadPg().Client)(this.options());
    // As the pool's clients: never an unhandled 'error' (the caller adds the listener that acts).
    client.on('error', () => undefined);
    await client.connect?.();
    return client;
  }

  /** Closes the pool (once its clients are released). */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end().catch(() => undefined);
  }

  /** A database error as the typed error a caller gets; typed errors of this library pass through. */
  failure(operation: string, error: unknown): Error {
    if (error instanceof OutboxDatabaseError || error instanceof OutboxTableMissingError) return error;
    if (sqlStateOf(error) === UNDEFINED_TABLE) return new OutboxTableMissingError(this.table.name);
    if (error instanceof Error && 'code' in error && typeof (error as { code: unknown }).code === 'string') {
      const code = (error as { code: string }).code;
      if (code.startsWith('OUTBOX_') || code === 'INVALID_OPTION') return error;
    }
    return new OutboxDatabaseError(operation, redactedReason(error));
  }

  private open(): PgPool {
    if (!this.pool) {
      const pool = new (loadPg().Pool)({ max: 4, ...this.options() });
      // A client that breaks (the server restarted, killed) must not crash the process with an
      // unhandled 'error', idle or not, however pg and the pool hand its listeners over: each has one
      // of its own for good. Its queries still fail, and the next use reconnects.
      pool.on('error', () => undefined);
      pool.on('connect', (client) => client.on('error', () => undefined));
      this.pool = pool;
    }
    return this.pool;
  }

  private options(): Record<string, unknown> {
    return typeof this.connection === 'string' ? { connectionString: this.connection } : { ...this.connection };
  }
}

function loadPg(): PgModule {
  return requirePeer<PgModule>('pg', 'The outbox relay and outboxStatus()');
}
