import type { PgQueryable } from './outbox-database';
import type { OutboxRow } from './outbox-rows';
import type { OutboxTable } from './outbox-table';

/** A claimed batch: its rows in id order, and the database's clock when it was read (epoch ms). */
export interface ClaimedRows {
  rows: OutboxRow[];
  databaseNow: number;
}

/** A row the relay gives up on, with why (an error code and its text, never the payload). */
export interface DeadRow {
  rowId: string;
  reason: string;
}

/** What one relay reports into `<table>_relays`. */
export interface RelayReport {
  relayId: string;
  host: string;
  pid: number;
  redisOk: boolean;
  lastError: string | undefined;
  relayed: number;
  lagMs: number;
}

/** Relays silent this long lose their row in `<table>_relays` (a crashed process never deletes its own). */
const FORGOTTEN_AFTER_S = 24 * 60 * 60;

/**
 * The relay's SQL, one statement per step. The claim locks the head row of each transaction
 * (its undead row with the smallest id) with SKIP LOCKED, then every undead row of those
 * transactions: every relay claims a transaction through its head, so one relay owns a whole
 * transaction and its rows are pushed in order, whatever the number of relays.
 */
export class RelayStatements {
  constructor(private readonly table: OutboxTable) {}

  /**
   * Claims up to `batchSize` rows, whole transactions only (the first one whole even when larger),
   * inside the caller's transaction.
   */
  async claim(client: PgQueryable, batchSize: number): Promise<ClaimedRows> {
    const t = this.table.rows;
    const { rows } = await client.query(
      `WITH heads AS (
         SELECT o.id, o.tx FROM ${t} o
         WHERE o.dead_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM ${t} p WHERE p.tx = o.tx AND p.dead_at IS NULL AND p.id < o.id)
         ORDER BY o.id LIMIT $1 FOR UPDATE OF o SKIP LOCKED),
       sized AS (
         SELECT h.id, h.tx, (SELECT count(*) FROM ${t} c WHERE c.tx = h.tx AND c.dead_at IS NULL) AS n FROM heads h),
       chosen AS (
         SELECT s.tx FROM (SELECT tx, sum(n) OVER (ORDER BY id) - n AS before FROM sized) s WHERE s.before < $1)
       SELECT r.id::text AS id, r.receipt::text AS receipt, r.kind, r.topic, r.message_id, r.payload, r.options,
         floor(extract(epoch FROM r.created_at) * 1000) AS created,
         floor(extract(epoch FROM clock_timestamp()) * 1000) AS now
       FROM ${t} r WHERE r.tx IN (SELECT tx FROM chosen) AND r.dead_at IS NULL
       ORDER BY r.id FOR UPDATE OF r`,
      [batchSize],
    );
    return {
      rows: rows.map((row) => ({
        rowId: String(row.id),
        receipt: String(row.receipt),
        kind: row.kind as OutboxRow['kind'],
        topic: String(row.topic),
        messageId: String(row.message_id),
        payload: String(row.payload),
        options: typeof row.options === 'string' ? row.options : null,
        createdAt: Number(row.created),
      })),
      databaseNow: rows.length === 0 ? 0 : Number(rows[0].now),
    };
  }

  /** Deletes the rows pushed and marks the dead ones, in one statement (none when there is nothing to do). */
  async finish(client: PgQueryable, pushed: string[], dead: DeadRow[]): Promise<void> {
    if (pushed.length === 0 && dead.length === 0) return;
    const t = this.table.rows;
    await client.query(
      `WITH gone AS (DELETE FROM ${t} WHERE id = ANY($1::bigint[]) RETURNING 1),
       marked AS (UPDATE ${t} o SET dead_at = clock_timestamp(), dead_reason = d.reason
         FROM unnest($2::bigint[], $3::text[]) AS d(id, reason) WHERE o.id = d.id RETURNING 1)
       SELECT (SELECT count(*) FROM gone) AS gone, (SELECT count(*) FROM marked) AS marked`,
      [pushed, dead.map((row) => row.rowId), dead.map((row) => row.reason)],
    );
  }

  /** Upserts this relay's report (seen now, by the database's clock) and forgets relays silent for a day. */
  async report(client: PgQueryable, report: RelayReport): Promise<void> {
    const r = this.table.relays;
    await client.query(
      `WITH forgotten AS (DELETE FROM ${r} WHERE seen_at < clock_timestamp() - make_interval(secs => $8) AND relay_id <> $1)
       INSERT INTO ${r} (relay_id, host, pid, started_at, seen_at, redis_ok, last_error, relayed, lag_ms)
       VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp(), $4, $5, $6, $7)
       ON CONFLICT (relay_id) DO UPDATE SET seen_at = clock_timestamp(), redis_ok = $4, last_error = $5,
         relayed = $6, lag_ms = $7`,
      [
        report.relayId,
        report.host,
        report.pid,
        report.redisOk,
        report.lastError ?? null,
        report.relayed,
        Math.max(0, Math.round(report.lagMs)),
        FORGOTTEN_AFTER_S,
      ],
    );
  }

  /** Deletes this relay's report (at stop). */
  async forget(client: PgQueryable, relayId: string): Promise<void> {
    await client.query(`DELETE FROM ${this.table.relays} WHERE relay_id = $1`, [relayId]);
  }
}
