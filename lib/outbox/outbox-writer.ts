import {
  OutboxDatabaseError,
  OutboxNotConfiguredError,
  OutboxTableMissingError,
  OutboxTransactionError,
} from '../errors';
import type {
  Flow,
  OutboxFlowResult,
  OutboxPushResult,
  OutboxTransaction,
  PushManyItem,
  PushOptions,
} from '../interfaces';
import type { QueueCore } from '../queue/queue-core';
import { InvalidOptionError } from '../errors';
import { optionsOf } from '../queue/validation';
import { adapterFor } from './adapters/adapter-for';
import type { OutboxAdapter } from './adapters/outbox-adapter';
import { NO_ACTIVE_TRANSACTION, redactedReason, sqlStateOf, UNDEFINED_TABLE } from './database-errors';
import { flowRow, pushRow, type OutboxRowValues } from './outbox-rows';
import type { OutboxTable } from './outbox-table';

const OPERATION = 'push in a transaction';

/**
 * Writes messages into the outbox table through the app's own transaction (see
 * RedisAckQueueOutboxApi): checks them as push does, finds the library's adapter, inserts every
 * row in one statement. It touches neither Redis nor the relay's pool.
 */
export class OutboxWriter {
  constructor(
    private readonly core: QueueCore,
    private readonly table: OutboxTable | undefined,
  ) {}

  async pushInTransaction(
    tx: OutboxTransaction,
    topic: string,
    payload: unknown,
    options?: PushOptions | null,
  ): Promise<OutboxPushResult> {
    const [result] = await this.pushManyInTransaction(tx, topic, [{ ...optionsOf(options), payload }]);
    return result;
  }

  async pushManyInTransaction(
    tx: OutboxTransaction,
    topic: string,
    items: PushManyItem[],
  ): Promise<OutboxPushResult[]> {
    const table = this.usable();
    const adapter = this.adapter(tx);
    if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
    const { tracing, settings } = this.core;
    // Checked before the transaction is touched: one bad item writes nothing.
    const write = async (traced: PushManyItem[]) => {
      const rows = traced.map((item) => pushRow(topic, item, settings.maxPayloadBytes));
      await this.insert(adapter, tx, table, rows);
      return rows.map((row): OutboxPushResult => (row.messageId === '' ? {} : { id: row.messageId }));
    };
    // With tracing, the send span is this call's, and its context rides in the rows' headers.
    return tracing && items.length > 0 ? tracing.push(topic, items, write) : write(items);
  }

  async pushFlowInTransaction(tx: OutboxTransaction, flow: Flow): Promise<OutboxFlowResult> {
    const table = this.usable();
    const adapter = this.adapter(tx);
    const { row, result } = flowRow(flow, this.core.settings.maxPayloadBytes);
    await this.insert(adapter, tx, table, [row]);
    return result;
  }

  private usable(): OutboxTable {
    this.core.assertOpen(OPERATION);
    if (!this.table) throw new OutboxNotConfiguredError('pushInTransaction()');
    return this.table;
  }

  private adapter(tx: OutboxTransaction): OutboxAdapter {
    const adapter = adapterFor(tx);
    adapter.assertUsable(tx);
    return adapter;
  }

  private async insert(adapter: OutboxAdapter, tx: object, table: OutboxTable, rows: OutboxRowValues[]): Promise<void> {
    if (rows.length === 0) return;
    const params = [
      rows.map((row) => row.kind),
      rows.map((row) => row.topic),
      rows.map((row) => row.messageId),
      rows.map((row) => row.payload),
      rows.map((row) => row.options),
    ];
    try {
      // A bare client cannot tell whether BEGIN was sent: PostgreSQL tells, refusing the check outside a block.
      if (adapter.blockUnknown) await adapter.query(tx, { sql: table.inBlockCheck(), params: [] });
      const inserted = await adapter.query(tx, { sql: table.insert(), params });
      if (inserted.length !== rows.length) throw new Error(`inserted ${inserted.length} of ${rows.length} rows`);
    } catch (error) {
      throw writeError(error, adapter, table);
    }
  }
}

/** A failed insert as a typed error: a missing table, a closed transaction, or the database's refusal. */
function writeError(error: unknown, adapter: OutboxAdapter, table: OutboxTable): Error {
  if (error instanceof OutboxTransactionError) return error;
  const state = sqlStateOf(error);
  if (state === UNDEFINED_TABLE) return new OutboxTableMissingError(table.name);
  if (state === NO_ACTIVE_TRANSACTION) {
    return new OutboxTransactionError(
      'not-in-transaction',
      adapter.library,
      "send BEGIN on the client first (client.query('BEGIN')), then COMMIT after the app's writes",
    );
  }
  if (adapter.closedError?.(error)) {
    return new OutboxTransactionError('closed', adapter.library, 'call pushInTransaction before the transaction ends');
  }
  return new OutboxDatabaseError(OPERATION, redactedReason(error));
}
