import { randomBytes } from 'node:crypto';
import type { BulkStore, ClaimedBulk } from '../engine/stores/bulk-store';
import { errorSummary } from '../errors/error-text';
import type { QueueLogger } from '../observability/queue-logger';
import { MESSAGES } from '../common/redis-ack-queue.messages';

/** How often an idle runner looks for bulk actions to run (one SMEMBERS). */
export const BULK_POLL_MS = 1_000;
/** A runner's lease on a bulk action (server clock): another service takes it over once it lapses. */
export const BULK_LEASE_MS = 5_000;
/** Ids per step: one script of a few ms at most, so the topic's own calls come in between. */
export const BULK_STEP_IDS = 200;
/** The pause after a failed round (Redis down), before trying again. */
const RETRY_MS = 1_000;

/**
 * Every service that has consumers or started a bulk action runs one of these: it looks for
 * bulk actions whose runner's lease lapsed (or that never had one), claims one, and steps through
 * its partitions, a bounded batch per step, paced to its maxPerSecond and yielding between steps.
 * The lease is renewed as it goes (a third of it at a time); a runner that dies stops renewing,
 * and another takes over where it stopped: a step removes its ids from the snapshot in the same
 * script that acts on them, so nothing is skipped or done twice, whoever steps.
 */
export class BulkRunnerLoop {
  /** This runner's token: its lease is its own, and a claim by it renews rather than competes. */
  private readonly token = randomBytes(9).toString('base64url');
  private stopped = false;
  private failing = false;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;

  constructor(
    private readonly store: BulkStore,
    private readonly logger: QueueLogger,
    /** Whether the service still wants it (it has consumers, or started a bulk action): else the loop ends. */
    private readonly wanted: () => boolean,
    private readonly timing = { pollMs: BULK_POLL_MS, leaseMs: BULK_LEASE_MS },
  ) {}

  start(): void {
    if (this.running || this.stopped) return;
    this.running = this.run();
  }

  /** A bulk action was started in this process: look now. */
  nudge(): void {
    this.wakeUp?.();
  }

  /** Stops the loop; waits at most RETRY_MS for a step in flight (atomic either way). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (bound = setTimeout(resolve, RETRY_MS)))]);
    clearTimeout(bound);
  }

  private async run(): Promise<void> {
    await this.loop();
    this.running = undefined;
  }

  private async loop(): Promise<void> {
    while (!this.stopped && this.wanted()) {
      try {
        const ran = await this.runOne();
        if (this.failing) this.failing = false;
        if (!ran) await this.sleep(this.timing.pollMs);
      } catch (error) {
        if (this.stopped) return;
        if (!this.failing) this.logger.warn(MESSAGES.bulkRunnerFailed(errorSummary(error)));
        this.failing = true;
        await this.sleep(RETRY_MS);
      }
    }
  }

  /** Claims the first bulk action it can and runs it; false when there was none to take. */
  private async runOne(): Promise<boolean> {
    for (const id of shuffled(await this.store.running())) {
      if (this.stopped) return false;
      const claim = await this.store.claim(id, this.token, this.timing.leaseMs);
      if (claim.outcome !== 'running') continue;
      await this.runBulk(claim.bulk);
      return true;
    }
    return false;
  }

  /**
   * Steps through every partition in turn until each snapshot is empty, then marks it done.
   * Returns early when it is aborted, or its lease was lost (another runner has it now).
   */
  private async runBulk(bulk: ClaimedBulk): Promise<void> {
    const { maxPerSecond } = bulk;
    const batch = Math.max(1, Math.min(BULK_STEP_IDS, Math.ceil(maxPerSecond / 10)));
    const open = new Set(bulk.partitions.map((_, i) => i));
    const started = Date.now();
    let renewedAt = started;
    let taken = 0;
    while (open.size > 0) {
      for (const partition of [...open]) {
        if (this.stopped) return;
        const { acted, skipped, left } = await this.store.step(bulk, partition, batch);
        taken += acted + skipped;
        if (left === 0) open.delete(partition);
        // Paced by wall time since the claim; at least a turn of the event loop between steps.
        const aheadMs = (taken / maxPerSecond) * 1000 - (Date.now() - started);
        await (aheadMs > 1 ? this.sleep(aheadMs) : new Promise((resolve) => setImmediate(resolve)));
        if (Date.now() - renewedAt > this.timing.leaseMs / 3) {
          renewedAt = Date.now();
          if ((await this.store.claim(bulk.id, this.token, this.timing.leaseMs)).outcome !== 'running') return;
        }
      }
    }
    await this.store.finish(bulk, this.token);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(this.timer);
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
      this.timer = setTimeout(done, ms);
    });
  }
}

/** A copy in random order: runners of a fleet start on different bulk actions. */
function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
