import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RedisAckQueueServer } from 'nestjs-redis-ack-queue/microservices';
import { SampleConfig } from '../sample.config';
import { BillingModule } from './billing.module';
import { BILLING_PATTERNS } from './billing.messages';

/**
 * The billing microservice: a process of its own beside the HTTP app, which starts it (see
 * ../billing-process.ts) with its REDIS_URL. It consumes the app's `order.placed` events and
 * answers its `billing.quote` and `billing.bill` requests, all through the sample's Redis; it
 * never starts a Redis of its own.
 */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.createMicroservice(BillingModule, {
    inject: [SampleConfig],
    useFactory: (config: SampleConfig) => ({
      strategy: new RedisAckQueueServer({
        connection: config.redisUrl,
        prefix: config.queuePrefix,
        drainMs: config.drainMs,
      }),
    }),
  });
  // app.close() drains: running handlers finish, prefetched messages go back to Redis. Every
  // signal is handled (the terminal's Ctrl-C reaches both processes, then the app sends SIGTERM),
  // and so is the end of the app's IPC channel: the app died without stopping this process.
  let closing: Promise<void> | undefined;
  const stop = () => {
    closing ??= app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        new Logger('Billing').error(`Billing microservice did not close cleanly: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  await app.listen();
  new Logger('Billing').log(
    `Billing microservice up: bills "${BILLING_PATTERNS.orderPlaced}" events, answers "${BILLING_PATTERNS.quote}" ` +
      `and "${BILLING_PATTERNS.bill}" requests`,
  );
}

void bootstrap();
