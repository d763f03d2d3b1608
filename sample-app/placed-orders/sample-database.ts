import { Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { outboxMigrationSql } from 'nestjs-redis-ack-queue';
import { DataSource } from 'typeorm';
import { PlacedOrder } from './placed-order.entity';

/** The table of the demo's orders, created at startup next to the outbox table. */
const ORDERS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS orders (
  id uuid PRIMARY KEY,
  item text NOT NULL,
  amount numeric NOT NULL,
  status text NOT NULL DEFAULT 'placed',
  created_at timestamptz NOT NULL DEFAULT now()
)`;

/**
 * The outbox demo's database: a TypeORM DataSource on DATABASE_URL (main.ts starts a private
 * PostgreSQL and sets it), with the outbox table and `orders` created. Absent (`dataSource`
 * undefined) when the demo is off: no PostgreSQL.
 */
export class SampleDatabase implements OnApplicationShutdown {
  constructor(
    /** The connection URL, or undefined when the demo is off. */
    readonly url: string | undefined,
    /** The DataSource, initialized, or undefined when the demo is off. */
    readonly dataSource: DataSource | undefined,
  ) {}

  /** Connects and creates both tables (idempotent: a second instance on the same database is fine). */
  static async open(url = process.env.DATABASE_URL): Promise<SampleDatabase> {
    if (!url || url === 'off') return new SampleDatabase(undefined, undefined);
    const dataSource = new DataSource({ type: 'postgres', url, entities: [PlacedOrder], poolSize: 5 });
    await dataSource.initialize();
    // Two instances starting together could race on CREATE ... IF NOT EXISTS: one lock makes it safe.
    await dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(4404)');
      await manager.query(outboxMigrationSql());
      await manager.query(ORDERS_TABLE_SQL);
    });
    new Logger('SampleDatabase').log('Outbox demo on: POST /placed-orders (add ?fail=1 to roll it back)');
    return new SampleDatabase(url, dataSource);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.dataSource?.destroy();
  }
}

/** Provides SampleDatabase, to the queue's options (its `outbox`) and to the demo's controller. */
@Module({
  providers: [{ provide: SampleDatabase, useFactory: () => SampleDatabase.open() }],
  exports: [SampleDatabase],
})
export class SampleDatabaseModule {}
