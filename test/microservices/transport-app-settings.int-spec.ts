import { Controller, Inject, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxy, ClientsModule, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { type RedisAckQueueConnection, RedisAckQueueModule, RedisAckQueueService } from '../../lib';
import { RedisAckQueueClient, RedisAckQueueServer } from '../../lib/microservices';
import { overrideQueueForTesting, pushedTo, startTestRedis, type TestRedis } from '../../lib/testing';
import { testLogger } from '../support/capture-logs';
import { eventually, useRedis } from '../support/queue-fixture';

const audited: number[] = [];

@Controller()
class PriceController {
  constructor(@Inject('PRICES') readonly prices: ClientProxy) {}

  @MessagePattern('price')
  price(@Payload() n: number): number {
    return n * 100;
  }

  @EventPattern<string>('audit')
  onAudit(@Payload() n: number) {
    audited.push(n);
  }
}

/** The app as written: the module's connection and prefix; the transport's connection, no prefix. */
function appModule(connection: RedisAckQueueConnection) {
  @Module({
    imports: [
      RedisAckQueueModule.forRoot({ connection, prefix: 'app', drainMs: 500 }),
      ClientsModule.register([{ name: 'PRICES', customClass: RedisAckQueueClient, options: { connection } }]),
    ],
    controllers: [PriceController],
  })
  class AppModule {}
  return AppModule;
}

/** Calls the app's transport through its client: one request, one event, handled. */
async function roundTrip(app: INestApplication, n: number): Promise<void> {
  const prices = app.get<ClientProxy>('PRICES');
  await expect(firstValueFrom(prices.send<number>('price', n))).resolves.toBe(n * 100);
  await lastValueFrom(prices.emit('audit', n));
  await eventually(() => audited.includes(n));
}

describe('the transport in an app follows its RedisAckQueueModule', () => {
  const fx = useRedis();
  /** KEYS on each server (a Cluster's client would ask one master). */
  const keysOnEveryNode = async (pattern: string) =>
    (await Promise.all(fx.nodes().map((node) => node.keys(pattern)))).flat();

  it('keeps the on() listeners added before the app handed it its prefix', async () => {
    const app = await NestFactory.create(appModule(fx.connection), { logger: false });
    const server = new RedisAckQueueServer({ connection: fx.connection });
    const acked: string[] = [];
    // Added before the app starts its microservices, so before the server takes the module's prefix.
    server.on('acked', (event) => acked.push(event.topic));
    app.connectMicroservice({ strategy: server });
    await app.startAllMicroservices();
    await app.init();
    await roundTrip(app, 3);
    await eventually(() => acked.includes('audit'));
    // Closed here: the next test's app consumes the same topics under the same prefix.
    await app.close();
  });

  it("uses the module's prefix when it has none of its own: its topics are the app's", async () => {
    const app = await NestFactory.create(appModule(fx.connection), { logger: false });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    fx.closers.push(() => app.close());
    await app.startAllMicroservices();
    await app.init();
    await roundTrip(app, 1);
    // The app's queue (dashboard, metrics and CLI read it) lists and counts them.
    const queue = app.get(RedisAckQueueService);
    expect(await queue.topics()).toEqual(expect.arrayContaining(['audit', 'price']));
    await queue.waitUntilIdle('audit');
    expect(await queue.history('audit')).toMatchObject({ topic: 'audit' });
    expect(await keysOnEveryNode('*ackq*')).toEqual([]);
  });

  it('keeps a prefix of its own', async () => {
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: fx.connection, prefix: 'app' }),
        ClientsModule.register([
          {
            name: 'BILLING',
            customClass: RedisAckQueueClient,
            options: { connection: fx.connection, prefix: 'billing' },
          },
        ]),
      ],
    })
    class OwnPrefixModule {}
    const app = await NestFactory.createApplicationContext(OwnPrefixModule, { logger: false });
    fx.closers.push(() => app.close());
    const billing = app.get<RedisAckQueueClient>('BILLING');
    expect(billing.unwrap().describeConnection()).toContain('prefix "billing"');
  });

  describe('under overrideQueueForTesting', () => {
    let developersRedis: TestRedis;
    beforeAll(async () => {
      developersRedis = await startTestRedis();
    });
    afterAll(() => developersRedis.stop());

    it("moves the app's transport server and ClientsModule client to the test Redis too", async () => {
      // The app points at the developer's own Redis; the test at its private one.
      const builder = Test.createTestingModule({ imports: [appModule(developersRedis.url)] }).setLogger(testLogger());
      const moduleRef = await overrideQueueForTesting(builder, { connection: fx.connection }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: developersRedis.url }) });
      fx.closers.push(() => app.close());
      await app.startAllMicroservices();
      await app.init();
      await roundTrip(app, 2);
      const queue = app.get(RedisAckQueueService);
      // The client's pushes are recorded as the app's are.
      const client = app.get<RedisAckQueueClient>('PRICES');
      expect(await pushedTo(client.unwrap(), 'audit')).toMatchObject([{ topic: 'audit', payload: 2 }]);
      // Everything went to the test Redis, under the test's prefix; the developer's Redis saw nothing.
      const inspector = new Redis(developersRedis.url);
      fx.closers.push(() => inspector.quit());
      expect(await inspector.dbsize()).toBe(0);
      expect(await queue.topics()).toEqual(expect.arrayContaining(['audit', 'price']));
      expect(await keysOnEveryNode('{test-*app:audit}*')).not.toEqual([]);
    });
  });
});
