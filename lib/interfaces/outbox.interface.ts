/**
 * Where the outbox's PostgreSQL is: a connection URL (`postgres://user:pass@host:5432/db`), or
 * the options of a `pg` Pool (host, port, user, password, database, ssl, max...).
 */
export type OutboxConnection = string | Record<string, unknown>;

/**
 * The option `outbox`: where the outbox table lives, and how this process relays it. See
 * docs/outbox.md.
 */
export interface OutboxOptions {
  /** The PostgreSQL the outbox table is in (the app's own database: the table joins its transactions). */
  connection: OutboxConnection;
  /**
   * The table's name: 1-63 characters of `a-z 0-9 _`, starting with a letter or `_`, optionally
   * after a schema and a dot (`app.queue_outbox`). `outboxMigrationSql(table)` creates it.
   * @defaultValue `'redis_ack_queue_outbox'`
   */
  table?: string;
  /**
   * `false` runs no relay in this process (it only writes rows; another process relays them).
   * Any number of processes may relay the same table: each transaction is relayed by one.
   * @defaultValue `true`
   */
  relay?: boolean | OutboxRelayOptions;
}

/** The option `outbox.relay` given as an object (the relay is then on). */
export interface OutboxRelayOptions {
  /**
   * The most rows one relay claims at once (1-10,000); a transaction is never split, so a
   * larger one is claimed whole.
   * @defaultValue `500`
   */
  batchSize?: number;
  /**
   * How often a relay looks for rows when no notification came (ms, 10-3,600,000): the fallback
   * for a lost `LISTEN` connection or a notification missed.
   * @defaultValue `1_000`
   */
  pollMs?: number;
}

/**
 * What `pushInTransaction` stored in the outbox: the id the message will be pushed with. Absent
 * for a push with a key mode, whose id is decided when the relay pushes it (as `push` decides).
 */
export interface OutboxPushResult {
  /** The message's id: given in the options, or a new UUID. */
  id?: string;
}

/** What `pushFlowInTransaction` stored: the id of each node, as a tree. */
export interface OutboxFlowResult {
  /** The node's topic. */
  topic: string;
  /** Its id: given, or a new UUID. */
  id: string;
  /** Its children, in the order given. */
  children: OutboxFlowResult[];
}

/** One relay, as `outboxStatus()` lists it. */
export interface OutboxRelayInfo {
  /** Its id: random, new at each start. */
  id: string;
  /** The host name of its process. */
  host: string;
  /** Its process id. */
  pid: number;
  /** When it started (epoch ms, the database's clock). */
  startedAt: number;
  /** When it last reported (epoch ms, the database's clock); a relay silent for 15 s is not listed. */
  seenAt: number;
  /** False while its last push could not reach Redis: it keeps the rows and tries again. */
  redisReachable: boolean;
  /** What its last failure was (an error code and its text, no payload), or absent. */
  lastError?: string;
  /** Rows it moved into the queue since it started. */
  relayed: number;
  /** How long its last batch's oldest row waited, from its insert to its push (ms). */
  lagMs: number;
}

/** The outbox as `outboxStatus()` reads it. */
export interface OutboxStatus {
  /** Committed rows waiting to be relayed (dead ones not counted). */
  depth: number;
  /** How long the oldest of them has waited since its insert (ms); 0 when none waits. */
  oldestAgeMs: number;
  /** Rows that can never be pushed (see `outboxDead`), kept until requeued or purged. */
  dead: number;
  /** The relays seen in the last 15 s. */
  relays: OutboxRelayInfo[];
}

/** A row the relay could not push and never will as it is (bad options of an older release...). */
export interface OutboxDeadRow {
  /** The row's id in the table. */
  rowId: string;
  /** The topic it was for. */
  topic: string;
  /** The message id it carried ('' for a key-mode push). */
  messageId: string;
  /** Why it is dead: the error code and its text (never the payload). */
  reason: string;
  /** When it was written (epoch ms). */
  createdAt: number;
  /** When the relay gave up on it (epoch ms). */
  deadAt: number;
}
