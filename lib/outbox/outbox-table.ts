import { InvalidOptionError } from '../errors';

/** The outbox table's name when the option `outbox.table` leaves it out. */
export const DEFAULT_OUTBOX_TABLE = 'redis_ack_queue_outbox';

// A table name, optionally after its schema: lower case only, so no name ever needs quoting
// rules beyond the double quotes every statement puts around it; 55 characters leave room for
// the longest suffix (`_relays`) within PostgreSQL's 63.
const NAME = /^(?:([a-z_][a-z0-9_]{0,54})\.)?([a-z_][a-z0-9_]{0,54})$/;

/**
 * The outbox table's name, checked.
 * @throws {InvalidOptionError} when it is not 1-55 characters of `a-z 0-9 _` (not starting with
 *   a digit), optionally after a schema of the same and a dot.
 */
export function checkOutboxTable(table: unknown, option = 'outbox.table'): string {
  if (typeof table !== 'string' || !NAME.test(table)) {
    throw new InvalidOptionError(
      option,
      table,
      "1-55 characters of a-z 0-9 _ not starting with a digit, optionally after a schema and a dot ('app.queue_outbox')",
    );
  }
  return table;
}

/**
 * The names of everything the outbox keeps in the database for one table, quoted where a
 * statement needs them: the rows, the relays' reports, the notify function, trigger and channel.
 */
export class OutboxTable {
  /** The table, quoted (`"schema"."name"`). */
  readonly rows: string;
  /** The relays' table, quoted. */
  readonly relays: string;
  /** The function the trigger calls, quoted. */
  readonly notifyFunction: string;
  /** The trigger's and the index's names (unqualified: they live in the table's schema). */
  readonly trigger: string;
  readonly txIndex: string;
  /** The LISTEN/NOTIFY channel: the table's name as given. */
  readonly channel: string;

  constructor(readonly name: string) {
    const [, schema, table] = NAME.exec(checkOutboxTable(name))!;
    const qualified = (suffix: string) => (schema ? `"${schema}"."${table}${suffix}"` : `"${table}${suffix}"`);
    this.rows = qualified('');
    this.relays = qualified('_relays');
    this.notifyFunction = qualified('_notify');
    this.trigger = `"${table}_notify"`;
    this.txIndex = `"${table}_tx"`;
    this.channel = name;
  }

  /**
   * The insert of `pushInTransaction`: one statement for any number of rows, given as five text
   * arrays (kind, topic, message_id, payload, options), returning their ids.
   */
  insert(): string {
    return (
      `INSERT INTO ${this.rows} (kind, topic, message_id, payload, options) ` +
      'SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) RETURNING id'
    );
  }

  /**
   * For a client that cannot tell whether it is inside a transaction block (a bare `pg` client):
   * PostgreSQL refuses LOCK TABLE outside one (SQLSTATE 25P01), and inside one this lock is the
   * one the insert takes anyway, so it costs a round trip and no contention.
   */
  inBlockCheck(): string {
    return `LOCK TABLE ${this.rows} IN ROW EXCLUSIVE MODE`;
  }

  /** The statements that create the table, its index, its relays' table and its notify trigger. */
  migration(): string {
    return `-- The transactional outbox of nestjs-redis-ack-queue (docs/outbox.md), table ${this.name}.
-- Idempotent: running it again changes nothing.
CREATE TABLE IF NOT EXISTS ${this.rows} (
  -- Insert order: the relay pushes a transaction's rows in it.
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The writing transaction: one relay claims all of its rows, so their order holds.
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  -- Marks the push in Redis, atomically with it: a row pushed before its delete is never pushed twice.
  receipt uuid NOT NULL DEFAULT gen_random_uuid(),
  -- 'push' (payload: the message's JSON) or 'flow' (payload: the whole flow's JSON).
  kind text NOT NULL DEFAULT 'push',
  topic text NOT NULL,
  -- The message's id ('' for a push with a key mode: the relay's push decides it).
  message_id text NOT NULL,
  payload text NOT NULL,
  -- The push options as JSON (NULL: none).
  options text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Set when the row can never be pushed; such a row waits for requeue or purge.
  dead_at timestamptz,
  dead_reason text
);
CREATE INDEX IF NOT EXISTS ${this.txIndex} ON ${this.rows} (tx, id);
CREATE TABLE IF NOT EXISTS ${this.relays} (
  relay_id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at timestamptz NOT NULL,
  redis_ok boolean NOT NULL,
  last_error text,
  relayed bigint NOT NULL DEFAULT 0,
  lag_ms bigint NOT NULL DEFAULT 0
);
CREATE OR REPLACE FUNCTION ${this.notifyFunction}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Sent at commit only (a rolled-back insert notifies nobody), once per transaction and channel.
  PERFORM pg_notify('${this.channel}', '');
  RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER ${this.trigger} AFTER INSERT ON ${this.rows}
  FOR EACH STATEMENT EXECUTE FUNCTION ${this.notifyFunction}();
`;
  }
}

/**
 * The SQL that creates the outbox table (PostgreSQL 14 or newer), its index, its relays' table and
 * the trigger that wakes the relays: put it in a migration of the app, or run it once. Idempotent.
 * The package ships the default table's as `sql/outbox.sql`.
 * @param table - The table's name, as in the option `outbox.table`.
 * @throws {InvalidOptionError} when `table` is not a valid name (see OutboxOptions.table).
 */
export function outboxMigrationSql(table: string = DEFAULT_OUTBOX_TABLE): string {
  return new OutboxTable(checkOutboxTable(table, 'table')).migration();
}
