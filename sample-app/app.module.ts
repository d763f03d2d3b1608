import { Module } from '@nestjs/common';
import { RedisAckQueueDashboardModule, RedisAckQueueModule } from 'nestjs-redis-ack-queue';
import { OperatorGuard } from './ops/operator.guard';
import { OpsModule } from './ops/ops.module';
import { OrdersModule } from './orders/orders.module';
import { NIGHTLY_REPORT } from './reports/nightly-report';
import { SampleConfig } from './sample.config';
import { SampleConfigModule } from './sample-config.module';

@Module({
  imports: [
    RedisAckQueueModule.forRootAsync({
      isGlobal: true,
      imports: [SampleConfigModule],
      inject: [SampleConfig],
      useFactory: (config: SampleConfig) => ({
        connection: config.redisUrl,
        prefix: config.queuePrefix,
        consumers: config.consumers,
        leaseMs: 10_000,
        drainMs: config.drainMs,
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
    OpsModule,
  ],
})
export class AppModule {}
