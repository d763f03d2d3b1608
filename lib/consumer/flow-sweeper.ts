import type { ConsumerFlows } from '../engine/consumer-engine';
import { asError } from '../errors/error-text';
import type { ConsumerReporting } from './failed-deliveries';

/** How often one topic is swept at most, however many reserves ask. */
const SWEEP_EVERY_MS = 1_000;

/**
 * The repair of flows in every service that consumes: when a reserve finds that a process seems
 * to have died mid-way in a flow of its topic (an outbox entry no parent heard for a second, a
 * node waiting 10 s for its root: see flow_repair_due in prelude-flows.lua), the topic is swept
 * (FlowTrees.sweep), at most once a second; parents it sends to the dead letters are reported as
 * the engine reports them (onParentsDead). Idle and healthy topics cost no command. It owns the
 * sweeps under way; the service's close waits for them.
 */
export class FlowSweeper {
  private readonly lastSwept = new Map<string, number>();
  /** Sweeps under way: close waits for them, so none runs against a closed connection. */
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly flows: ConsumerFlows,
    private readonly report: ConsumerReporting,
  ) {}

  /** A reserve of `topic` asked for a sweep. */
  readonly wanted = (topic: string): void => {
    const now = Date.now();
    if (this.stopped || now - (this.lastSwept.get(topic) ?? 0) < SWEEP_EVERY_MS) return;
    this.lastSwept.set(topic, now);
    const sweep = this.flows
      .sweep(topic)
      // The next reserve asks again; a consumer's own error event says Redis is away.
      .catch((error: unknown) => this.report.events.emit({ type: 'error', topic, error: asError(error) }))
      .finally(() => this.running.delete(sweep));
    this.running.add(sweep);
  };

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }
}
