import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../../sample-app/app.module';
import { testLogger } from './capture-logs';

/**
 * The sample's HTTP app in the test process, on a free port, against the test's Redis: its
 * settings come from the environment (sample.config.ts), fast ones unless `env` says otherwise.
 * The app logs through the test capture: kept, replayed if the test fails.
 */
export async function startSampleApp(
  redisUrl: string,
  env: Record<string, string> = {},
): Promise<{ app: INestApplication; url: string }> {
  Object.assign(process.env, {
    REDIS_URL: redisUrl,
    PAYMENT_TIMEOUT_MS: '60000',
    INVOICE_FAILURE_RATE: '0',
    MAIL_LATENCY_MS: '20',
    DRAIN_MS: '5000',
    ...env,
  });
  const app = await NestFactory.create(AppModule, { logger: testLogger() });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}

/** POSTs `body` (or `{}`) as JSON. */
export const postJson = (url: string, body?: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });

/** The response's JSON body, taken to be a T (the app's own types say what each route answers). */
export const readJson = async <T>(response: Response | Promise<Response>): Promise<T> =>
  (await (await response).json()) as T;
