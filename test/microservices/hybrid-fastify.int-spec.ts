import { Controller, Get, Inject, type INestApplication, Module, Param, ParseIntPipe, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import type { PushResult, RedisAckQueueConnection } from '../../lib';
import { RedisAckQueueClient, RedisAckQueueContext, RedisAckQueueServer } from '../../lib/microservices';
import { deferred, turns } from '../support/async-helpers';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

const CLIENT = 'HYBRID_FASTIFY_CLIENT';
const shipped = uniqueTopic('hybrid.shipped');
const DOUBLE = { cmd: 'hybrid.double' };

/**
 * A hybrid app on Fastify: HTTP routes that call the transport through a RedisAckQueueClient
 * (`send`, `emit`), an @EventPattern and a @MessagePattern served by a RedisAckQueueServer
 * connected with `connectMicroservice`; `app.close()` drains the running event handler (it
 * finishes and its message is acked) before the app's connections close.
 */
describe('a hybrid Fastify app with RedisAckQueueServer', () => {
  let app: INestApplication | undefined;
  // Declared before useRedis: Jest runs afterAll hooks in order, and the app must close before
  // the Redis it uses stops.
  afterAll(async () => {
    await app?.close();
  });
  const redis = useRedis();
  const started = deferred<{ order: unknown; attempt: number }>();
  const release = deferred();
  let finished = false;

  @Controller()
  class Orders {
    constructor(@Inject(CLIENT) private readonly client: RedisAckQueueClient) {}

    @Get('double/:value')
    async double(@Param('value', ParseIntPipe) value: number): Promise<{ doubled: number }> {
      return { doubled: await firstValueFrom(this.client.send<number>(DOUBLE, value)) };
    }

    @Post('ship/:order')
    ship(@Param('order') order: string): Promise<PushResult> {
      return lastValueFrom(this.client.emit<PushResult>(shipped, { order }));
    }

    @MessagePattern(DOUBLE)
    doubleOf(@Payload() value: number): number {
      return value * 2;
    }

    @EventPattern<string>(shipped)
    async onShipped(@Payload() data: { order: unknown }, @Ctx() context: RedisAckQueueContext): Promise<void> {
      started.resolve({ order: data.order, attempt: context.attempt });
      await release.promise;
      finished = true;
    }
  }

  function appModule(connection: RedisAckQueueConnection) {
    @Module({
      imports: [ClientsModule.register([{ name: CLIENT, customClass: RedisAckQueueClient, options: { connection } }])],
      controllers: [Orders],
    })
    class AppModule {}
    return AppModule;
  }

  let url: string;
  beforeAll(async () => {
    app = await NestFactory.create(appModule(redis.connection), new FastifyAdapter(), { logger: false });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: redis.connection }) });
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });

  it("answers an HTTP route with the @MessagePattern handler's reply to its send", async () => {
    const response = await fetch(`${url}/double/21`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ doubled: 42 });
  });

  it('drains on app.close(): the running @EventPattern handler finishes and its message is acked', async () => {
    const response = await fetch(`${url}/ship/A-1`, { method: 'POST' });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ duplicate: false });
    expect(await started.promise).toEqual({ order: 'A-1', attempt: 1 });

    let closed = false;
    const closing = app!.close().then(() => (closed = true));
    await turns();
    expect(closed).toBe(false); // waits for the handler
    release.resolve();
    await closing;
    app = undefined;
    expect(finished).toBe(true);

    const inspector = await redis.service();
    expect(await inspector.stats(shipped)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
  });
});
