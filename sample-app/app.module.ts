import { Module } from '@nestjs/common';
import { RedisAckQueueModule } from 'nestjs-redis-ack-queue';
import { OpsModule } from './ops/ops.module';
import { OrdersModule } from './orders/orders.module';
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
        prefix: 'sample',
        consumers: config.consumers,
        leaseMs: 10_000,
        drainMs: config.drainMs,
      }),
    }),
    OrdersModule,
    OpsModule,
  ],
})
export class AppModule {}
