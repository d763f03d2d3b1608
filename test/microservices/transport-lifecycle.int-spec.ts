import { Controller, Get, Inject, type INestApplication, Module, Param, ParseIntPipe, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxy, ClientsModule, Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import type { Redis } from 'ioredis';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { InvalidOptionError, type RedisAckQueueService } from '../../lib';
import {
  RedisAckQueueClient,
  type RedisAckQueueClientOptions,
  RedisAckQueueContext,
  RedisAckQueueServer,
} from '../../lib/microservices';
import { deferred } from '../support/async-helpers';
import { eventually, useRedis } from '../support/queue-fixture';

const audited: number[] = [];
let release = deferred();
const started: string[] = [];

@Controller()
class HybridController {
  constructor(@Inject('PRICES') private readonly prices: ClientProxy) {}

  @Get('quote/:n')
  quote(@Param('n', ParseIntPipe) n: number): Promise<number> {
    return firstValueFrom(this.prices.send<number>('price', n));
  }

  @Post('audit/:n')
  async audit(@Param('n', ParseIntPipe) n: number): Promise<{ id: string }> {
    return lastValueFrom(this.prices.emit<{ id: string }>('audit', n));
  }

  @MessagePattern('price')
  price(@Payload() n: number): number {
    return n * 100;
  }

  @EventPattern<string>('audit')
  async onAudit(@Payload() n: number, @Ctx() context: RedisAckQueueContext) {
    started.push(context.id);
    if (n < 0) await release.promise;
    audited.push(n);
  }
}

describe('the microservice transport in an app', () => {
  const fx = useRedis();

  function hybridModule(clientOptions: () => RedisAckQueueClientOptions) {
    @Module({
      imports: [
        ClientsModule.registerAsync([
          { name: 'PRICES', useFactory: () => ({ customClass: RedisAckQueueClient, options: clientOptions() }) },
        ]),
      ],
      controllers: [HybridController],
    })
    class HybridModule {}
    return HybridModule;
  }

  async function startHybrid(): Promise<{ app: INestApplication; url: string; queue: RedisAckQueueService }> {
    const app = await NestFactory.create(
      hybridModule(() => ({ connection: fx.connection })),
      { logger: false },
    );
    const server = new RedisAckQueueServer({ connection: fx.connection, concurrency: 1, drainMs: 30_000 });
    app.connectMicroservice({ strategy: server });
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    return { app, url: await app.getUrl(), queue: server.unwrap() };
  }

  it('serves an Express hybrid app: an HTTP route sends through the client, a handler of the same app answers', async () => {
    const { app, url, queue } = await startHybrid();
    try {
      const response = await fetch(`${url}/quote/7`);
      expect(await response.text()).toBe('700');
      const emitted = (await (await fetch(`${url}/audit/3`, { method: 'POST' })).json()) as { id: string };
      await queue.waitUntilIdle('audit');
      expect(audited).toContain(3);
      expect(started).toContain(emitted.id);
    } finally {
      await app.close();
    }
  });

  it('drains on app.close(): a running handler finishes and is acked, prefetched messages go back without an attempt', async () => {
    const { app, url, queue } = await startHybrid();
    release = deferred();
    const running = (await (await fetch(`${url}/audit/-1`, { method: 'POST' })).json()) as { id: string };
    await eventually(() => started.includes(running.id));
    const waiting = await queue.push('audit', 4);
    const closed = app.close();
    // The handler holds the close until it ends.
    let done = false;
    void closed.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done).toBe(false);
    release.resolve();
    await closed;
    expect(audited).toContain(-1);
    const service = await fx.service();
    expect(await service.get('audit', running.id)).toBeNull();
    // Not started here: still waiting, its next delivery its first attempt.
    expect(await service.get('audit', waiting.id)).toMatchObject({ state: 'ready', attempt: 0 });
  });

  it("fails listen() with a typed error when a pattern's extra is out of range", async () => {
    @Controller()
    class BadExtras {
      @EventPattern('bad.extras', { concurrency: 0 })
      handle(@Payload() _data: unknown) {
        return undefined;
      }
    }
    @Module({ controllers: [BadExtras] })
    class BadModule {}
    const app = await NestFactory.createMicroservice(BadModule, {
      strategy: new RedisAckQueueServer({ connection: fx.connection }),
      logger: false,
    });
    await expect(app.listen()).rejects.toBeInstanceOf(InvalidOptionError);
    await app.close();
  });

  it('refuses bad options at construction with typed errors', () => {
    expect(() => new RedisAckQueueServer({ leaseMs: -1 })).toThrow(InvalidOptionError);
    expect(() => new RedisAckQueueClient({ timeoutMs: 0 })).toThrow(InvalidOptionError);
  });

  it('opens, per server, one command, one blocking per pattern and one pub/sub connection; per client, one command and one pub/sub', async () => {
    if (!fx.server) return; // CLIENT LIST of one server.
    const connections = async () =>
      ((await (fx.redis as Redis).client('LIST')) as string).split('\n').filter((line) => line.includes(' cmd='))
        .length;
    const before = await connections();
    const { app, url } = await startHybrid();
    try {
      await fetch(`${url}/quote/1`);
      // Two patterns (price, audit): 1 + 2 + 1 for the server; 1 + 1 for the client (replies).
      expect((await connections()) - before).toBe(4 + 2);
    } finally {
      await app.close();
    }
  });
});
