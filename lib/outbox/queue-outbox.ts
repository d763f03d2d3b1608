import { settleWithin } from '../common/settle-within';
import { OutboxNotConfiguredError } from '../errors';
import type {
  Flow,
  OutboxDeadRow,
  OutboxFlowResult,
  OutboxPushResult,
  OutboxStatus,
  OutboxTransaction,
  PushManyItem,
  PushOptions,
} from '../interfaces';
import type { QueueCore } from '../queue/queue-core';
import { OutboxDatabase } from './outbox-database';
import { OutboxReads } from './outbox-reads';
import { OutboxRelay } from './outbox-relay';
import type { OutboxSettings } from './outbox-settings';
import { OutboxWriter } from './outbox-writer';
import type { RelayPusher } from './relay-pusher';

/**
 * The transactional outbox of a service (RedisAckQueueOutboxApi): the writer (the app's
 * transactions), the operator's reads, and this process' relay when it runs one. Without the
 * option `outbox`, every call but none at all is refused with OutboxNotConfiguredError.
 */
export class QueueOutbox {
  private readonly writer: OutboxWriter;
  private readonly database: OutboxDatabase | undefined;
  private readonly reads: OutboxReads | undefined;
  /** This process' relay; undefined without an outbox or with `relay: false`. */
  readonly relay: OutboxRelay | undefined;

  constructor(
    private readonly core: QueueCore,
    settings: OutboxSettings | undefined,
    pusher: RelayPusher,
  ) {
    this.writer = new OutboxWriter(core, settings?.table);
    if (!settings) return;
    this.database = new OutboxDatabase(settings.connection, settings.table);
    this.reads = new OutboxReads(this.database);
    if (settings.relay) {
      this.relay = new OutboxRelay(this.database, settings.relay, pusher, core.logger, core.settings.maxPayloadBytes);
    }
  }

  pushInTransaction(
    tx: OutboxTransaction,
    topic: string,
    payload: unknown,
    options?: PushOptions | null,
  ): Promise<OutboxPushResult> {
    return this.writer.pushInTransaction(tx, topic, payload, options);
  }

  pushManyInTransaction(tx: OutboxTransaction, topic: string, items: PushManyItem[]): Promise<OutboxPushResult[]> {
    return this.writer.pushManyInTransaction(tx, topic, items);
  }

  pushFlowInTransaction(tx: OutboxTransaction, flow: Flow): Promise<OutboxFlowResult> {
    return this.writer.pushFlowInTransaction(tx, flow);
  }

  async outboxStatus(): Promise<OutboxStatus> {
    return this.readsFor('read the outbox status', 'outboxStatus()').status();
  }

  async outboxDead(options?: { limit?: number } | null): Promise<OutboxDeadRow[]> {
    return this.readsFor('list dead outbox rows', 'outboxDead()').dead(options);
  }

  async requeueOutboxDead(rowIds?: string[]): Promise<number> {
    return this.readsFor('requeue dead outbox rows', 'requeueOutboxDead()').requeue(rowIds);
  }

  async purgeOutboxDead(rowIds?: string[]): Promise<number> {
    return this.readsFor('purge dead outbox rows', 'purgeOutboxDead()').purge(rowIds);
  }

  /** Starts the relay (the service's connect). */
  start(): void {
    this.relay?.start();
  }

  /** Stops the relay and closes the outbox's pool (the service's close, before Redis closes). */
  async close(): Promise<void> {
    await this.relay?.stop();
    // Bounded: a pool whose server is gone must not hold the service's close.
    if (this.database) await settleWithin(this.database.close(), 10_000);
  }

  /** `operation` in the user's words (a closed service says it), `method` as an unconfigured one names it. */
  private readsFor(operation: string, method: string): OutboxReads {
    this.core.assertOpen(operation);
    if (!this.reads) throw new OutboxNotConfiguredError(method);
    return this.reads;
  }
}
