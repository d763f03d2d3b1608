import type { ScheduleStore } from '../engine/stores/schedule-store';
import { errorSummary } from '../errors/error-text';
import type { RedisAckQueueEvent } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { decodeDefinition, type ScheduleSpec } from '../queue/schedules/schedule-spec';
import { tickToRun } from '../queue/schedules/schedule-times';
import { BackgroundLoop } from './background-loop';

/** How often an idle scheduler asks whether a schedule changed elsewhere (one GET): the pickup bound. */
export const SCHEDULE_POLL_MS = 2_000;
/** A full reload now and then, in case a change's version bump was lost with its process. */
const RELOAD_MS = 60_000;

interface Entry {
  topic: string;
  name: string;
  definition: string;
  spec: ScheduleSpec;
  nextRunAt: number;
}

/**
 * Every service that runs schedules runs one of these: it knows every schedule of the
 * prefix, sleeps until the earliest pending tick (by the Redis server's clock), and runs
 * due ticks with schedule-tick.lua. Every instance races for each tick; the script's
 * compare-and-set lets one win, so ticks are exactly once however many instances run or die.
 * Idle, it sends one GET per SCHEDULE_POLL_MS to see changes made by other processes.
 */
export class SchedulerLoop {
  private entries: Entry[] = [];
  private version: string | undefined;
  private reloadedAt = 0;
  private polledAt = 0;
  private reloadNeeded = true;
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly store: ScheduleStore,
    logger: QueueLogger,
    private readonly emit: (event: RedisAckQueueEvent) => void,
    /** Whether the service still wants it (it has consumers, or changed schedules): else the loop ends. */
    wanted: () => boolean,
  ) {
    this.loop = new BackgroundLoop(
      () => this.round(),
      wanted,
      (error, first) => {
        if (first) logger.warn(MESSAGES.schedulerFailed(errorSummary(error)));
        this.reloadNeeded = true;
      },
    );
  }

  get started(): boolean {
    return this.loop.started;
  }

  start(): void {
    this.loop.start();
  }

  /** A schedule changed in this process: reload and recompute the sleep now. */
  nudge(): void {
    this.reloadNeeded = true;
    this.loop.wake();
  }

  /** Stops the loop (see BackgroundLoop.stop): a tick is atomic either way. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Runs the due ticks; resolves with how long to sleep until the next one. */
  private async round(): Promise<number> {
    await this.pollVersion();
    if (this.reloadNeeded || Date.now() - this.reloadedAt > RELOAD_MS) await this.reload();
    await this.runDueTicks();
    return this.msUntilNextTick();
  }

  private async pollVersion(): Promise<void> {
    if (this.version !== undefined && Date.now() - this.polledAt < SCHEDULE_POLL_MS) return;
    this.polledAt = Date.now();
    const version = await this.store.version();
    if (version !== this.version) this.reloadNeeded = true;
    this.version = version;
  }

  private async reload(): Promise<void> {
    this.reloadNeeded = false;
    this.reloadedAt = Date.now();
    const entries: Entry[] = [];
    for (const topic of await this.store.topics()) {
      for (const stored of await this.store.list(topic)) {
        const spec = decodeDefinition(stored.definition);
        if (!spec || stored.nextRunAt === null) continue;
        entries.push({ topic, name: stored.name, definition: stored.definition, spec, nextRunAt: stored.nextRunAt });
      }
    }
    this.entries = entries;
  }

  /** Runs every due tick; a missed one after another at once, so a short gap is caught up. */
  private async runDueTicks(): Promise<void> {
    for (let round = 0; round < 1_000 && !this.loop.isStopped && !this.reloadNeeded; round++) {
      const now = await this.store.serverNow();
      const due = this.entries.filter((entry) => entry.nextRunAt <= now);
      if (due.length === 0) return;
      for (const entry of due) await this.runTick(entry, now);
    }
  }

  private async runTick(entry: Entry, now: number): Promise<void> {
    const plan = tickToRun(entry.spec, entry.nextRunAt, now);
    if (!plan) return;
    const { topic, name, definition } = entry;
    const outcome = await this.store.tick(
      topic,
      { name, definition, expected: entry.nextRunAt, tick: plan.tick, next: plan.next },
      entry.spec.body,
    );
    if (outcome === 'stale') {
      // Another instance ran it, or the schedule changed: read the stored state again.
      this.reloadNeeded = true;
      return;
    }
    if (outcome === 'early') return;
    this.emit({ type: 'pushed', topic, id: this.store.tickId(topic, name, plan.tick) });
    if (plan.next === null) this.entries = this.entries.filter((e) => e !== entry);
    else entry.nextRunAt = plan.next;
  }

  private async msUntilNextTick(): Promise<number> {
    if (this.reloadNeeded) return 0;
    if (this.entries.length === 0) return SCHEDULE_POLL_MS;
    const earliest = Math.min(...this.entries.map((entry) => entry.nextRunAt));
    return Math.max(0, Math.min(earliest - (await this.store.serverNow()) + 1, SCHEDULE_POLL_MS));
  }
}
