import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { startBilling } from './billing-process';
import { resolvePostgres } from './local-postgres';
import { resolveRedis } from './local-redis';

async function bootstrap(): Promise<void> {
  const redis = await resolveRedis();
  process.env.REDIS_URL = redis.url;
  // The outbox demo's PostgreSQL: DATABASE_URL, else a private server, else (not installed) the demo is off.
  const postgres = await resolvePostgres();
  process.env.DATABASE_URL = postgres.url ?? 'off';
  // The billing microservice, a second process on the same Redis (see billing/main.ts).
  const billing = startBilling(redis.url);
  const app = await NestFactory.create(AppModule);
  // On SIGTERM / SIGINT, app.close() runs Nest's shutdown: consumers drain, then the
  // connections close; the billing process drains and exits meanwhile. Only then does the
  // private Redis (if any) stop. An app without such a Redis or child process can simply call
  // app.enableShutdownHooks().
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void Promise.allSettled([app.close(), billing.stop()]).finally(async () => {
        redis.stop();
        await postgres.stop();
        process.exit(0);
      });
    });
  }
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  const url = await app.getUrl();
  new Logger('Sample').log(
    `Orders sample on ${url} — try: curl -XPOST ${url}/orders -H 'content-type: application/json' ` +
      `-d '{"item":"book","amount":12}' (or POST /placed-orders, the transactional outbox demo); then GET /orders/<id>/quote and /orders/<id>/bill (the billing ` +
      `microservice answers), open /dashboard, or GET /queues, /metrics, /health`,
  );
}

void bootstrap();
