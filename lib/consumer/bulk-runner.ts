import { randomBytes } from 'node:crypto';
import type { TextResealer } from '../engine/codecs/reseal-format';
import type { BulkStore, ClaimedBulk } from '../engine/stores/bulk-store';
import { errorSummary } from '../errors/error-text';
import type { QueueLogger } from '../observability/queue-logger';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { BackgroundLoop } from './background-loop';

/**
 * How often an idle runner looks for bulk actions to run (one SMEMBERS): as often as an idle
 * consumer's wait, so an idle service pays one command per cycle for them; a dead runner's bulk
 * action is taken over within its lease plus this.
 */
export const BULK_POLL_MS = 5_000;
/** A runner's lease on a bulk action (server clock): another service takes it over once it lapses. */
export const BULK_LEASE_MS = 5_000;
/** Ids per step: one script of a few ms at most, so the topic's own calls come in between. */
export const BULK_STEP_IDS = 200;

/** How this process seals stored values again, for the reencrypt bulk actions it may run (ValueCodecs). */
export interface BulkResealing {
  /**
   * What seals `topic`'s values again, when this process's codec for it seals under `requires`
   * (its current key id; '' for a codec without key ids); else undefined: it must not run it.
   */
  resealer(topic: string, requires: string): TextResealer | undefined;
}

/**
 * Every service that has consumers or started a bulk action runs one of these: it looks for
 * bulk actions whose runner's lease lapsed (or that never had one), claims one, and steps through
 * its partitions, a bounded batch per step, paced to its maxPerSecond and yielding between steps.
 * The lease is renewed as it goes (a third of it at a time); a runner that dies stops renewing,
 * and another takes over where it stopped: a step removes its ids from the snapshot in the same
 * script that acts on them, so nothing is skipped or done twice, whoever steps. A reencrypt runs
 * only where the codec is (see BulkResealing): a runner without it gives the lease back at once.
 */
export class BulkRunnerLoop {
  /** This runner's token: its lease is its own, and a claim by it renews rather than competes. */
  private readonly token = randomBytes(9).toString('base64url');
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly store: BulkStore,
    logger: QueueLogger,
    /** Whether the service still wants it (it has consumers, or started a bulk action): else the loop ends. */
    wanted: () => boolean,
    private readonly resealing: BulkResealing,
    private readonly timing = { pollMs: BULK_POLL_MS, leaseMs: BULK_LEASE_MS },
  ) {
    this.loop = new BackgroundLoop(
      async () => ((await this.runOne()) ? 0 : this.timing.pollMs),
      wanted,
      (error, first) => {
        if (first) logger.warn(MESSAGES.bulkRunnerFailed(errorSummary(error)));
      },
    );
  }

  start(): void {
    this.loop.start();
  }

  /** A bulk action was started in this process: look now. */
  nudge(): void {
    this.loop.wake();
  }

  /** Stops the loop (see BackgroundLoop.stop): a step is atomic either way. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Claims the first bulk action it can and runs it; false when there was none to take. */
  private async runOne(): Promise<boolean> {
    for (const id of shuffled(await this.store.running())) {
      if (this.loop.isStopped) return false;
      const claim = await this.store.claim(id, this.token, this.timing.leaseMs);
      if (claim.outcome !== 'running') continue;
      const { bulk } = claim;
      const reseal = bulk.action === 'reencrypt' ? this.resealing.resealer(bulk.topic, bulk.requires) : undefined;
      if (bulk.action === 'reencrypt' && !reseal) {
        // Not here: another process has the codec (or will have, once deployed).
        await this.store.release(bulk, this.token);
        continue;
      }
      await this.runBulk(bulk, reseal);
      return true;
    }
    return false;
  }

  /**
   * Steps through every partition in turn until each snapshot is empty, then marks it done.
   * Returns early when it is aborted, or its lease was lost (another runner has it now).
   */
  private async runBulk(bulk: ClaimedBulk, reseal: TextResealer | undefined): Promise<void> {
    const { maxPerSecond } = bulk;
    const batch = Math.max(1, Math.min(BULK_STEP_IDS, Math.ceil(maxPerSecond / 10)));
    const open = new Set(bulk.partitions.map((_, i) => i));
    const started = Date.now();
    let renewedAt = started;
    let taken = 0;
    while (open.size > 0) {
      for (const partition of [...open]) {
        if (this.loop.isStopped) return;
        const { acted, skipped, left } = await this.store.step(bulk, partition, batch, reseal);
        taken += acted + skipped;
        if (left === 0) open.delete(partition);
        // Paced by wall time since the claim; at least a turn of the event loop between steps.
        const aheadMs = (taken / maxPerSecond) * 1000 - (Date.now() - started);
        await (aheadMs > 1 ? this.loop.sleep(aheadMs) : new Promise((resolve) => setImmediate(resolve)));
        if (Date.now() - renewedAt > this.timing.leaseMs / 3) {
          renewedAt = Date.now();
          if ((await this.store.claim(bulk.id, this.token, this.timing.leaseMs)).outcome !== 'running') return;
        }
      }
    }
    await this.store.finish(bulk, this.token);
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
