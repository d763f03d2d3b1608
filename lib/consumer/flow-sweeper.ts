import type { FlowHandoff } from '../engine/consumer-engine';
import { asError } from '../errors/error-text';
import type { QueueEvents } from '../queue/queue-events';

/** How often a service looks for what a dead process left of its consumed topics' flows. */
const SWEEP_EVERY_MS = 2_000;

/**
 * The repair of flows, run by every service that consumes: every 2 s, for each topic it
 * consumes, the outbox entries no parent heard (a process died between a child's end and its
 * parent's countdown) are passed on, and flows a pushFlow left uncommitted are finished or,
 * after an hour without their root, dropped (FlowTrees.sweep). It owns its timer, which runs
 * only while the service has consumers.
 */
export class FlowSweeper {
  private timer: NodeJS.Timeout | undefined;
  /** The sweep under way: stop waits for it, so nothing runs against a closed connection. */
  private running: Promise<void> | undefined;

  constructor(
    private readonly flows: FlowHandoff,
    private readonly topics: () => Iterable<string>,
    private readonly events: QueueEvents,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.sweep().finally(() => (this.running = undefined));
    }, SWEEP_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async sweep(): Promise<void> {
    for (const topic of new Set(this.topics())) {
      try {
        await this.flows.sweep(topic);
      } catch (error) {
        // The next sweep tries again; a consumer's own error event says Redis is away.
        this.events.emit({ type: 'error', topic, error: asError(error) });
      }
    }
  }
}
