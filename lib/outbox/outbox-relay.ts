import type { QueueLogger } from '../observability/queue-logger';
import type { OutboxDatabase } from './outbox-database';
import type { RelayPusher } from './relay-pusher';

/** The relay's settings (option `outbox.relay`). */
export interface RelaySettings {
  batchSize: number;
  pollMs: number;
}

/**
 * Moves committed outbox rows into the queue, exactly once, in order per transaction (see
 * docs/outbox.md). Placeholder: the relay is being built.
 */
export class OutboxRelay {
  constructor(
    readonly database: OutboxDatabase,
    readonly settings: RelaySettings,
    readonly pusher: RelayPusher,
    readonly logger: QueueLogger,
  ) {}

  /** Starts relaying (at connect). */
  start(): void {}

  /** Stops: the batch under way finishes (or its transaction rolls back), the LISTEN connection ends. */
  async stop(): Promise<void> {}
}
