import { Module } from '@nestjs/common';
import { RedisAckQueueDashboardModule, RedisAckQueueModule } from 'nestjs-redis-ack-queue';
import { OperatorGuard } from './ops/operator.guard';
import { OpsModule } from './ops/ops.module';
import { OrdersModule } from './orders/orders.module';
import { PlacedOrdersModule } from './placed-orders/placed-orders.module';
import { SampleDatabase, SampleDatabaseModule } from './placed-orders/sample-database';
import { NIGHTLY_REPORT } from './reports/nightly-report';
import { SampleConfig } from './sample.config';
import { SampleConfigModule } from './sample-config.module';

@Module({
  imports: [
    RedisAckQueueModule.forRootAsync({
      isGlobal: true,
      // The outbox demo's database is opened (its tables created) before the queue, whose relay reads them.
      imports: [SampleConfigModule, SampleDatabaseModule],
      inject: [SampleConfig, SampleDatabase],
      useFactory: (config: SampleConfig, database: SampleDatabase) => ({
        connection: config.redisUrl,
        prefix: config.queuePrefix,
        consumers: config.consumers,
        leaseMs: 10_000,
        drainMs: config.drainMs,
        // The transactional outbox (POST /placed-orders): rows written in the app's transactions,
        // relayed into the queue by this process once committed. Off without PostgreSQL.
        outbox: database.url ? { connection: database.url } : undefined,
        // Upserted at every startup; an unchanged schedule keeps its pending tick.
        schedules: [
          {
            topic: NIGHTLY_REPORT,
            name: 'nightly',
            cron: config.reportCron,
            tz: config.reportTz,
            payload: { kind: 'orders' },
          },
        ],
      }),
    }),
    // The operators' dashboard at /dashboard, behind a guard (its dependency comes from `imports`).
    RedisAckQueueDashboardModule.register({ path: '/dashboard', guard: OperatorGuard, imports: [SampleConfigModule] }),
    OrdersModule,
    PlacedOrdersModule,
    OpsModule,
  ],
})
export class AppModule {}
