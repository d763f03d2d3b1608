import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { resolveRedis } from './local-redis';

async function bootstrap(): Promise<void> {
  const redis = await resolveRedis();
  process.env.REDIS_URL = redis.url;
  const app = await NestFactory.create(AppModule);
  // On SIGTERM / SIGINT, app.close() runs Nest's shutdown: consumers drain, then the
  // connections close; only then does the private Redis (if any) stop. An app without
  // such a Redis can simply call app.enableShutdownHooks().
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void app.close().finally(() => {
        redis.stop();
        process.exit(0);
      });
    });
  }
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  new Logger('Sample').log(
    `Orders sample on http://127.0.0.1:${port} — try: curl -XPOST localhost:${port}/orders ` +
      `-H 'content-type: application/json' -d '{"item":"book","amount":12}'; then open /dashboard, or GET /queues, /metrics, /health`,
  );
}

void bootstrap();
