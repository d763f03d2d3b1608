import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  Injectable,
  Module,
  type INestApplication,
  UnauthorizedException,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { timingSafeEqual } from 'node:crypto';
import { Registry } from 'prom-client';
import {
  isRedisAckQueueRoute,
  RedisAckQueueDashboardModule,
  RedisAckQueueMetricsModule,
  RedisAckQueueModule,
} from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

const TOKEN = 'Bearer api-token';
const OPERATOR = `Basic ${Buffer.from('operator:s3cret').toString('base64')}`;

/** The app's own API guard, app-wide, as the README shows it: the library's routes go to their own guards. */
@Injectable()
class ApiGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http' || isRedisAckQueueRoute(context)) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers.authorization === TOKEN;
  }
}

/** An app-wide guard that knows nothing of the library: it denies everything. */
@Injectable()
class DenyAllGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** An app-wide guard that lets only the metrics route through (the dashboard stays behind the app's login). */
@Injectable()
class MetricsOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return isRedisAckQueueRoute(context, 'metrics');
  }
}

/** The dashboard guard of docs/dashboard.md: HTTP Basic, which a browser asks for and sends. */
@Injectable()
class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const sent = Buffer.from(http.getRequest<{ headers: { authorization?: string } }>().headers.authorization ?? '');
    const expected = Buffer.from(OPERATOR);
    if (sent.length === expected.length && timingSafeEqual(sent, expected)) return true;
    http
      .getResponse<{ header(name: string, value: string): unknown }>()
      .header('WWW-Authenticate', 'Basic realm="queues"');
    throw new UnauthorizedException();
  }
}

@Controller('orders')
class OrdersController {
  @Get()
  list(): string[] {
    return [];
  }
}

describe.each(['express', 'fastify'] as const)('an app-wide guard and the library routes (%s)', (platform) => {
  const fx = useRedis();
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  async function start(appGuard: new () => CanActivate): Promise<(path: string, auth?: string) => Promise<Response>> {
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: fx.connection, prefix: uniqueTopic('p'), logLevel: 'silent' }),
        RedisAckQueueMetricsModule.forRoot({ path: '/metrics', registry: new Registry() }),
        RedisAckQueueDashboardModule.register({ path: '/queues', guard: OperatorGuard }),
      ],
      controllers: [OrdersController],
      providers: [{ provide: APP_GUARD, useClass: appGuard }],
    })
    class AppModule {}
    app =
      platform === 'fastify'
        ? await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false })
        : await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    const { port } = (app.getHttpServer() as { address(): { port: number } }).address();
    return (path, auth) =>
      fetch(`http://127.0.0.1:${port}${path}`, { headers: auth === undefined ? {} : { authorization: auth } });
  }

  it('lets Prometheus scrape /metrics and the dashboard ask for its own login, while the API stays guarded', async () => {
    const get = await start(ApiGuard);
    expect((await get('/orders')).status).toBe(403);
    expect((await get('/orders', TOKEN)).status).toBe(200);
    const scrape = await get('/metrics');
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('redis_ack_queue_');
    // The dashboard's own guard: a browser without credentials is asked for them, then sends them.
    const asked = await get('/queues');
    expect(asked.status).toBe(401);
    expect(asked.headers.get('www-authenticate')).toBe('Basic realm="queues"');
    expect((await get('/queues/api/topics', TOKEN)).status).toBe(401);
    expect((await get('/queues', OPERATOR)).status).toBe(200);
    expect((await get('/queues/api/topics', OPERATOR)).status).toBe(200);
  });

  it('tells the routes apart: an app-wide guard may let only the metrics through', async () => {
    const get = await start(MetricsOnlyGuard);
    expect((await get('/metrics')).status).toBe(200);
    expect((await get('/queues', OPERATOR)).status).toBe(403);
    expect((await get('/orders', TOKEN)).status).toBe(403);
  });

  it('without the check, an app-wide guard also guards the library routes (why the helper exists)', async () => {
    const get = await start(DenyAllGuard);
    expect((await get('/metrics')).status).toBe(403);
    expect((await get('/queues', OPERATOR)).status).toBe(403);
  });
});
