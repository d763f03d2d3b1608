import type { Flow } from './queue-flow-api.interface';
import type { PushManyItem, PushOptions } from './message.interface';
import type { OutboxDeadRow, OutboxFlowResult, OutboxPushResult, OutboxStatus } from './outbox.interface';

/**
 * The app's own transaction, of one of the libraries the outbox knows: a TypeORM `EntityManager`
 * (inside `transaction()`) or `QueryRunner` (after `startTransaction()`), a Prisma interactive
 * transaction client, a MikroORM `EntityManager` inside `transactional()`, a Drizzle or Kysely
 * transaction, or a `pg` `Client` / `PoolClient` after `BEGIN`.
 */
export type OutboxTransaction = object;

/**
 * The transactional outbox: messages written in the app's own database transaction, moved into
 * the queue by a relay once it commits. Part of RedisAckQueueService; needs the option `outbox`.
 * See docs/outbox.md.
 */
export interface RedisAckQueueOutboxApi {
  /**
   * Writes one message into the outbox table through the app's transaction `tx`: it commits or
   * rolls back with the app's writes, and once committed a relay pushes it exactly once, with
   * every push option. Checks its arguments as `push` does, first: a bad one writes nothing.
   * Touches neither Redis nor the relay's pool.
   * @throws {OutboxNotConfiguredError} when the service has no `outbox` option.
   * @throws {OutboxTransactionError} when `tx` is not an open transaction of a known library.
   * @throws {OutboxTableMissingError} when the table does not exist (the transaction is aborted).
   * @throws {InvalidTopicError | InvalidPayloadError | PayloadTooLargeError | InvalidMessageIdError |
   *   InvalidOptionError} as `push` does.
   * @throws {OutboxDatabaseError} when the database refused the insert for another reason.
   */
  pushInTransaction<T = unknown>(
    tx: OutboxTransaction,
    topic: string,
    payload: T,
    options?: PushOptions | null,
  ): Promise<OutboxPushResult>;

  /**
   * pushMany through the transaction: one insert for all items, pushed by the relay in order.
   * One bad item rejects the whole call before the database is touched.
   * @throws as `pushInTransaction`.
   */
  pushManyInTransaction<T = unknown>(
    tx: OutboxTransaction,
    topic: string,
    items: PushManyItem<T>[],
  ): Promise<OutboxPushResult[]>;

  /**
   * pushFlow through the transaction: the whole tree is one row, pushed by the relay as `pushFlow`
   * would. Nodes without an id get a new UUID.
   * @throws as `pushInTransaction`, and as `pushFlow` for a bad tree.
   */
  pushFlowInTransaction(tx: OutboxTransaction, flow: Flow): Promise<OutboxFlowResult>;

  /**
   * How deep the outbox is, how old its oldest row, how many rows are dead, and which relays run.
   * Reads the database only: it answers while Redis is down.
   * @throws {OutboxNotConfiguredError} when the service has no `outbox` option.
   * @throws {OutboxTableMissingError} when the table does not exist.
   * @throws {OutboxDatabaseError} when the database cannot be reached.
   */
  outboxStatus(): Promise<OutboxStatus>;

  /**
   * The dead rows, oldest first.
   * @param options.limit - Most to return (1-10,000). Default 100.
   * @throws as `outboxStatus`, and InvalidOptionError for a bad limit.
   */
  outboxDead(options?: { limit?: number } | null): Promise<OutboxDeadRow[]>;

  /**
   * Gives dead rows (the given row ids, or all) back to the relay; returns how many.
   * @throws as `outboxStatus`, and InvalidOptionError when `rowIds` is not an array of row ids.
   */
  requeueOutboxDead(rowIds?: string[]): Promise<number>;

  /**
   * Deletes dead rows (the given row ids, or all) for good; returns how many.
   * @throws as `requeueOutboxDead`.
   */
  purgeOutboxDead(rowIds?: string[]): Promise<number>;
}
