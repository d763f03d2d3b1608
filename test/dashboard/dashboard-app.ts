import { type CanActivate, type ExecutionContext, Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  RedisAckQueueDashboardModule,
  RedisAckQueueModule,
  RedisAckQueueService,
  type RedisAckQueueConnection,
  type RedisAckQueueDashboardOptions,
  type RedisAckQueueOptions,
} from '../../lib';

/** The operator's credential the test guard accepts (in the Authorization header). */
export const OPERATOR = 'Bearer operator-token';

/** A guard as an app would write one: only requests with the operator's credential pass. */
@Injectable()
export class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers.authorization === OPERATOR;
  }
}

export type Platform = 'express' | 'fastify';

export interface DashboardApp {
  app: INestApplication;
  queue: RedisAckQueueService;
  /** The dashboard page's absolute URL. */
  url: string;
  close(): Promise<void>;
}

/** A Nest app on `platform`, listening on a free port, with a queue and the dashboard at /queues. */
export async function startDashboardApp(
  platform: Platform,
  connection: RedisAckQueueConnection,
  prefix: string,
  options: Partial<RedisAckQueueDashboardOptions> = {},
  queueOptions: RedisAckQueueOptions = {},
): Promise<DashboardApp> {
  @Module({
    imports: [
      RedisAckQueueModule.forRoot({ connection, prefix, logLevel: 'silent', ...queueOptions }),
      RedisAckQueueDashboardModule.register({ guard: OperatorGuard, ...options }),
    ],
  })
  class AppModule {}
  const app =
    platform === 'fastify'
      ? await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as { address(): { port: number } };
  const address = server.address();
  return {
    app,
    queue: app.get(RedisAckQueueService),
    url: `http://127.0.0.1:${address.port}${options.path ?? '/queues'}`,
    close: () => app.close(),
  };
}
