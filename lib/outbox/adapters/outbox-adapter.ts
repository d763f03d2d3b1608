/** One statement for an adapter: SQL with `$1`, `$2`... placeholders, and their values in order. */
export interface OutboxStatement {
  /** The SQL, its parameters written `$1`, `$2`... (an adapter whose library wants `?` rewrites them). */
  sql: string;
  /** The values: strings, numbers, null, and arrays of strings (sent as PostgreSQL arrays). */
  params: unknown[];
}

/**
 * How the outbox writes through one library's transaction object (TypeORM, Prisma, MikroORM,
 * Drizzle, Kysely, pg). An adapter never imports its library at load time: it recognizes the
 * object by its shape, and loads the library's module (when it needs one) only when used.
 */
export interface OutboxAdapter {
  /** The library's name, as errors say it: `typeorm`, `prisma`, `mikro-orm`, `drizzle`, `kysely`, `pg`. */
  readonly library: string;
  /** Whether `tx` is an object of this library (a transaction or not: assertUsable tells). */
  recognizes(tx: object): boolean;
  /**
   * Throws OutboxTransactionError (`not-in-transaction`, `closed` or `wrong-database`, with a hint
   * naming what to pass) when `tx` cannot take a statement of the app's transaction now.
   */
  assertUsable(tx: object): void;
  /**
   * Runs the statement inside `tx`; resolves to the rows it returned. A driver's error is thrown as
   * the library threw it (the writer maps it: a missing table, a closed transaction...).
   */
  query(tx: object, statement: OutboxStatement): Promise<Record<string, unknown>[]>;
  /**
   * Whether a thrown error means the transaction had already ended (a library that cannot tell
   * beforehand, such as Prisma, says so only when the statement fails).
   */
  closedError?(error: unknown): boolean;
  /**
   * True for an object that cannot tell whether BEGIN was sent (a bare `pg` client): the writer
   * then has PostgreSQL check that a transaction block is open before it inserts.
   */
  readonly blockUnknown?: boolean;
}
