import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { settleWithin } from '../common/settle-within';
import { OutboxTableMissingError } from '../errors';
import type { QueueLogger } from '../observability/queue-logger';
import type { OutboxDatabase, PgQueryable } from './outbox-database';
import { type BatchOutcome, pushBatch, relayReason } from './relay-batch';
import type { RelayPusher } from './relay-pusher';
import { RelayStatements } from './relay-statements';
import { RelayWake } from './relay-wake';

/** The relay's settings (option `outbox.relay`). */
export interface RelaySettings {
  /** The most rows one batch claims (whole transactions: the first one whole even when larger). */
  batchSize: number;
  /** How often it looks for rows without a notification (ms). */
  pollMs: number;
}

/**
 * What one batch did, for metrics (see OutboxRelay.onBatch): told after its commit, for every
 * batch that relayed or killed rows.
 */
export interface RelayBatchReport {
  /** Rows moved into the queue (pushed, or found pushed before), now deleted from the outbox. */
  relayed: number;
  /** Each relayed row's wait, from its insert to its push (ms, the database's clock). */
  lagsMs: number[];
  /** Rows marked dead (never pushable as they are). */
  dead: number;
}

/** How often a relay writes its report into `<table>_relays`. */
export const RELAY_REPORT_MS = 5_000;
/** The longest stop() waits for the batch under way, and for each closing step. */
const STOP_WAIT_MS = 10_000;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/**
 * TEST ONLY: the fault tests (test/outbox/outbox-relay.fault-spec.ts) set this variable in a
 * child process to 'claimed', 'pushed' or 'committed'; the relay then SIGKILLs its own process
 * at that step of its first non-empty batch, as a crash there would. Unset, it does nothing.
 */
const TEST_STOP_AT = 'ACKQ_OUTBOX_TEST_STOP_AT';

function crashHereInTests(step: 'claimed' | 'pushed' | 'committed'): void {
  if (process.env[TEST_STOP_AT] === step) process.kill(process.pid, 'SIGKILL');
}

/**
 * Moves committed outbox rows into the queue, exactly once, in order per transaction (see
 * docs/outbox.md). One loop: claim a batch (whole transactions, see RelayStatements), push it
 * (relay-batch), delete what was pushed and mark what never can be, commit, then forget the
 * receipts. Woken by NOTIFY, by its poll timer, and at once after a full batch. Redis or the
 * database out of reach: the rows are kept, said once per outage, and tried again with a
 * back-off (100 ms doubling to 5 s). It reports into `<table>_relays` every 5 s.
 */
export class OutboxRelay {
  /** This relay's id in `<table>_relays`: random, new at each start. */
  readonly id = randomUUID();
  private readonly statements: RelayStatements;
  private readonly wake: RelayWake;
  private readonly listeners = new Set<(report: RelayBatchReport) => void>();
  private running: Promise<void> | undefined;
  private reporting: Promise<void> | undefined;
  private reportTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private backoffMs = 0;
  private redisDown = false;
  private databaseDown = false;
  private tableMissing = false;
  private lastError: string | undefined;
  private relayed = 0;
  private lagMs = 0;

  constructor(
    readonly database: OutboxDatabase,
    readonly settings: RelaySettings,
    readonly pusher: RelayPusher,
    readonly logger: QueueLogger,
    /** The service's `maxPayloadBytes`: a row is checked alone, as push would, before its batch. */
    readonly maxPayloadBytes: number = 1024 * 1024,
  ) {
    this.statements = new RelayStatements(database.table);
    this.wake = new RelayWake(database);
  }

  /**
   * Calls `listener` after each batch that relayed or killed rows (after its commit), with what
   * it did (RelayBatchReport); for metrics. A listener that throws is ignored. Returns the
   * function that removes it.
   */
  onBatch(listener: (report: RelayBatchReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts relaying (at connect). */
  start(): void {
    if (this.running || this.stopping) return;
    this.wake.start();
    this.running = this.loop();
    this.report();
    this.reportTimer = setInterval(() => this.report(), RELAY_REPORT_MS);
    this.reportTimer.unref?.();
  }

  /**
   * Stops: no more waking, the batch under way finishes (or its transaction rolls back), the
   * LISTEN connection ends, its report row is deleted. Each wait is bounded: a database or Redis
   * out of reach cannot hold it.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.reportTimer);
    const wakeStopped = this.wake.stop();
    // settleWithin waits its whole bound for no promise: each is given one.
    if (!this.running) return;
    await settleWithin(this.running, STOP_WAIT_MS);
    await settleWithin(wakeStopped, STOP_WAIT_MS);
    if (this.reporting) await settleWithin(this.reporting, STOP_WAIT_MS);
    const forgotten = this.statements.forget(this.pooled('delete the relay report'), this.id).catch(() => undefined);
    await settleWithin(forgotten, STOP_WAIT_MS);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let full = false;
      try {
        full = await this.batch();
      } catch (error) {
        this.failed(error);
      }
      if (this.stopping) break;
      if (this.backoffMs > 0) await this.wake.wait(this.backoffMs, true);
      else if (!full) await this.wake.wait(this.settings.pollMs);
    }
  }

  /** One batch; true when it was full (more rows may wait). Throws for the database's failures. */
  private async batch(): Promise<boolean> {
    let claimedAt = { database: 0, local: 0 };
    let claimed = 0;
    const outcome = await this.database.transaction('relay outbox rows', async (client): Promise<BatchOutcome> => {
      const { rows, databaseNow } = await this.statements.claim(client, this.settings.batchSize);
      claimed = rows.length;
      claimedAt = { database: databaseNow, local: Date.now() };
      if (rows.length === 0) return { pushed: [], dead: [], receipts: [], pushedAt: [] };
      crashHereInTests('claimed');
      const pushed = await pushBatch(rows, this.pusher, this.maxPayloadBytes);
      crashHereInTests('pushed');
      await this.statements.finish(
        client,
        pushed.pushed.map((row) => row.rowId),
        pushed.dead,
      );
      return pushed;
    });
    this.databaseBack();
    if (claimed > 0 && outcome.pushed.length + outcome.dead.length > 0) crashHereInTests('committed');
    for (const { topic, partition, receipts } of outcome.receipts) {
      // Cleanup only: a receipt kept longer refuses nothing but a second push of a deleted row.
      await this.pusher.forgetReceipts(topic, partition, receipts).catch(() => undefined);
    }
    for (const dead of outcome.dead) this.logger.error(MESSAGES.outboxRowDead(dead.rowId, dead.topic, dead.reason));
    this.relayedBatch(outcome, claimedAt);
    if (outcome.redisError !== undefined) {
      this.redisFailed(outcome.redisError, claimed - outcome.pushed.length - outcome.dead.length);
      return false;
    }
    if (claimed > 0) this.redisBack();
    this.backoffMs = 0;
    return claimed >= this.settings.batchSize;
  }

  private relayedBatch(outcome: BatchOutcome, claimedAt: { database: number; local: number }): void {
    if (outcome.pushed.length === 0 && outcome.dead.length === 0) return;
    // The push's time on the database's clock: its time at the claim, plus what passed here since.
    const lagsMs = outcome.pushed.map((row, i) =>
      Math.max(0, claimedAt.database + (outcome.pushedAt[i] - claimedAt.local) - row.createdAt),
    );
    this.relayed += outcome.pushed.length;
    if (lagsMs.length > 0) this.lagMs = Math.max(...lagsMs);
    const report: RelayBatchReport = { relayed: outcome.pushed.length, lagsMs, dead: outcome.dead.length };
    for (const listener of this.listeners) {
      try {
        listener(report);
      } catch {
        // A metrics listener's failure is not the relay's.
      }
    }
  }

  private redisFailed(error: unknown, kept: number): void {
    // At shutdown the service refuses pushes first: the rows are kept for the next relay, and that is no outage.
    if (this.stopping) return;
    this.lastError = relayReason(error);
    if (!this.redisDown) this.logger.warn(MESSAGES.outboxRelayRedisDown(kept, this.lastError));
    this.redisDown = true;
    this.backOff();
  }

  private redisBack(): void {
    if (!this.redisDown) return;
    this.redisDown = false;
    this.lastError = undefined;
    this.logger.warn(MESSAGES.outboxRelayRedisBack());
  }

  /** A failure of the database (or of the claim's SQL): said once per outage, then tried again. */
  private failed(error: unknown): void {
    this.lastError = relayReason(error);
    if (error instanceof OutboxTableMissingError) {
      if (!this.tableMissing) this.logger.error(error.message);
      this.tableMissing = true;
    } else {
      if (!this.databaseDown) this.logger.warn(MESSAGES.outboxRelayDatabaseDown(this.lastError));
      this.databaseDown = true;
    }
    this.backOff();
  }

  private databaseBack(): void {
    if (this.databaseDown || this.tableMissing) this.lastError = undefined;
    this.databaseDown = false;
    this.tableMissing = false;
  }

  private backOff(): void {
    this.backoffMs = this.backoffMs === 0 ? FIRST_BACKOFF_MS : Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }

  /** The pool as one statement at a time (outside any transaction). */
  private pooled(operation: string): PgQueryable {
    return {
      query: async (sql, params) => {
        const rows = await this.database.query(operation, sql, params);
        return { rows, rowCount: rows.length };
      },
    };
  }

  /** Writes this relay's report (one at a time; a failure waits for the next one). */
  private report(): void {
    if (this.reporting || this.stopping) return;
    this.reporting = this.statements
      .report(this.pooled('report the relay'), {
        relayId: this.id,
        host: hostname(),
        pid: process.pid,
        redisOk: !this.redisDown,
        lastError: this.lastError,
        relayed: this.relayed,
        lagMs: this.lagMs,
      })
      .catch(() => undefined)
      .finally(() => (this.reporting = undefined));
  }
}
