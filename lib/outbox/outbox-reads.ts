import type { OutboxDeadRow, OutboxRelayInfo, OutboxStatus } from '../interfaces';
import { InvalidOptionError } from '../errors';
import type { OutboxDatabase } from './outbox-database';

/** A relay that has not reported for this long is not listed (it reports every 5 s). */
export const RELAY_SILENT_MS = 15_000;

const ROW_ID = /^[1-9][0-9]{0,18}$/;

/** What operators read and do with the outbox (outboxStatus, outboxDead, requeue, purge): the database only. */
export class OutboxReads {
  constructor(private readonly database: OutboxDatabase) {}

  async status(): Promise<OutboxStatus> {
    const { rows, relays } = this.database.table;
    const [counts] = await this.database.query(
      'read the outbox status',
      `SELECT count(*) FILTER (WHERE dead_at IS NULL) AS depth, count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead,
         coalesce(floor(extract(epoch FROM clock_timestamp() - min(created_at) FILTER (WHERE dead_at IS NULL)) * 1000), 0) AS oldest
       FROM ${rows}`,
    );
    const listed = await this.database.query(
      'read the outbox status',
      `SELECT relay_id, host, pid, floor(extract(epoch FROM started_at) * 1000) AS started,
         floor(extract(epoch FROM seen_at) * 1000) AS seen, redis_ok, last_error, relayed, lag_ms
       FROM ${relays} WHERE seen_at > clock_timestamp() - make_interval(secs => $1) ORDER BY started_at, relay_id`,
      [RELAY_SILENT_MS / 1000],
    );
    return {
      depth: Number(counts.depth),
      dead: Number(counts.dead),
      oldestAgeMs: Math.max(0, Number(counts.oldest)),
      relays: listed.map((row): OutboxRelayInfo => ({
        id: String(row.relay_id),
        host: String(row.host),
        pid: Number(row.pid),
        startedAt: Number(row.started),
        seenAt: Number(row.seen),
        redisReachable: row.redis_ok === true,
        ...(typeof row.last_error === 'string' ? { lastError: row.last_error } : {}),
        relayed: Number(row.relayed),
        lagMs: Number(row.lag_ms),
      })),
    };
  }

  async dead(options: { limit?: number } | null | undefined): Promise<OutboxDeadRow[]> {
    const limit = options?.limit ?? 100;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new InvalidOptionError('limit', limit, 'a whole number from 1 to 10,000');
    }
    const rows = await this.database.query(
      'read the dead outbox rows',
      // Not `AS id`: ORDER BY would then sort the text ('10' before '9'), not the bigint.
      `SELECT id::text AS row_id, topic, message_id, dead_reason, floor(extract(epoch FROM created_at) * 1000) AS created,
         floor(extract(epoch FROM dead_at) * 1000) AS dead
       FROM ${this.database.table.rows} WHERE dead_at IS NOT NULL ORDER BY id LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({
      rowId: String(row.row_id),
      topic: String(row.topic),
      messageId: String(row.message_id),
      reason: typeof row.dead_reason === 'string' ? row.dead_reason : '',
      createdAt: Number(row.created),
      deadAt: Number(row.dead),
    }));
  }

  /** Dead rows back to the relay (dead_at cleared); the relay is woken by the notify. */
  async requeue(rowIds: string[] | undefined): Promise<number> {
    const ids = checkRowIds(rowIds);
    const { rows, channel } = this.database.table;
    const changed = await this.database.query(
      'requeue dead outbox rows',
      `WITH requeued AS (UPDATE ${rows} SET dead_at = NULL, dead_reason = NULL
         WHERE dead_at IS NOT NULL AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[])) RETURNING 1)
       SELECT count(*) AS count, pg_notify($2, '') FROM requeued`,
      [ids ?? null, channel],
    );
    return Number(changed[0].count);
  }

  async purge(rowIds: string[] | undefined): Promise<number> {
    const ids = checkRowIds(rowIds);
    const changed = await this.database.query(
      'purge dead outbox rows',
      `WITH purged AS (DELETE FROM ${this.database.table.rows}
         WHERE dead_at IS NOT NULL AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[])) RETURNING 1)
       SELECT count(*) AS count FROM purged`,
      [ids ?? null],
    );
    return Number(changed[0].count);
  }
}

function checkRowIds(rowIds: string[] | undefined): string[] | undefined {
  if (rowIds === undefined) return undefined;
  if (!Array.isArray(rowIds)) throw new InvalidOptionError('rowIds', rowIds, 'an array of row ids');
  const bad = rowIds.find((id) => typeof id !== 'string' || !ROW_ID.test(id));
  if (bad !== undefined) throw new InvalidOptionError('rowIds', bad, "row ids as outboxDead() gives them ('42')");
  return rowIds;
}
