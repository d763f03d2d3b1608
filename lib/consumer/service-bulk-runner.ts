import type { BulkStore } from '../engine/stores/bulk-store';
import type { QueueLogger } from '../observability/queue-logger';
import type { BulkStarts } from '../queue/queue-bulk';
import { BulkRunnerLoop, type BulkResealing } from './bulk-runner';

/**
 * When a service runs the bulk actions' runner loop: while it has consumers, and for good once it
 * started a bulk action (so the one that starts it also runs it, consumers or not).
 */
export class ServiceBulkRunner implements BulkStarts {
  private readonly loop: BulkRunnerLoop;
  private startedOne = false;

  constructor(store: BulkStore, logger: QueueLogger, resealing: BulkResealing, hasConsumers: () => boolean) {
    this.loop = new BulkRunnerLoop(store, logger, () => this.startedOne || hasConsumers(), resealing);
  }

  /** Called on every consume(). */
  start(): void {
    this.loop.start();
  }

  started(): void {
    this.startedOne = true;
    this.loop.start();
    this.loop.nudge();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
