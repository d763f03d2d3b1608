import { Module } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { RedisAckQueueClient } from 'nestjs-redis-ack-queue/microservices';
import { SampleConfig } from '../sample.config';
import { SampleConfigModule } from '../sample-config.module';
import { BillingClient } from './billing.client';
import { BILLING_CLIENT } from './billing.messages';

/**
 * What the HTTP app imports to talk to the billing microservice: a RedisAckQueueClient on the
 * sample's Redis and prefix (Nest closes it when the app closes), behind BillingClient.
 */
@Module({
  imports: [
    ClientsModule.registerAsync([
      {
        name: BILLING_CLIENT,
        imports: [SampleConfigModule],
        inject: [SampleConfig],
        useFactory: (config: SampleConfig) => ({
          customClass: RedisAckQueueClient,
          options: { connection: config.redisUrl, prefix: config.queuePrefix, timeoutMs: config.billingTimeoutMs },
        }),
      },
    ]),
  ],
  providers: [BillingClient],
  exports: [BillingClient],
})
export class BillingClientModule {}
