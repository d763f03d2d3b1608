import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  defineTopic,
  DuplicateQueueRegistrationError,
  getQueueToken,
  InjectQueue,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
  UnknownQueueError,
} from '../../lib';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, type TestClient, uniqueTopic, useRedis } from '../support/queue-fixture';

// Shutdown here waits out drainMs even with no handler running (fixed on another branch): kept short.
const drainMs = 500;

// Two private servers: the default queue and "audit" on the first (other prefixes), "billing" on the second.
const first = useRedis();
const second = useRedis();
const apps: INestApplicationContext[] = [];

async function boot(module: object): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(module as never, {
    logger: testLogger(),
    abortOnError: false,
  });
  apps.push(app);
  return app;
}

afterAll(async () => {
  for (const app of apps) await app.close();
});

/** Connections open on both servers: a failed startup must leave none behind. */
const clients = async (): Promise<number> => {
  const lists = await Promise.all([...first.nodes(), ...second.nodes()].map((node) => node.client('LIST')));
  return lists.map((list) => String(list).split('\n').filter(Boolean).length).reduce((a, b) => a + b, 0);
};

const CONFIG = 'TEST_CONFIG';
@Module({ providers: [{ provide: CONFIG, useValue: { prefix: 'bill' } }], exports: [CONFIG] })
class ConfigModule {}

describe('a registration is global by default', () => {
  it('lets a feature module inject the service without importing anything', async () => {
    @Injectable()
    class Producer {
      constructor(readonly queue: RedisAckQueueService) {}
    }
    @Module({ providers: [Producer] })
    class FeatureModule {}
    @Module({ imports: [RedisAckQueueModule.forRoot({ connection: first.connection }), FeatureModule] })
    class Root {}
    const app = await boot(Root);
    const topic = uniqueTopic('global');
    await app.get(Producer).queue.push(topic, 'from a feature module');
    expect(await app.get(RedisAckQueueService).stats(topic)).toMatchObject({ ready: 1 });
    await app.close();
  });

  it('with isGlobal: false, is seen only by the modules that import it', async () => {
    @Injectable()
    class Producer {
      constructor(readonly queue: RedisAckQueueService) {}
    }
    @Module({ providers: [Producer] })
    class FeatureModule {}
    // A client the test owns: Nest runs no shutdown hook after a failed dependency resolution,
    // so a connection the service opened itself would stay open.
    const registration = RedisAckQueueModule.forRoot({ connection: first.client(), isGlobal: false });
    @Module({ imports: [registration, FeatureModule] })
    class Root {}
    expectLogs(/can't resolve dependencies of the Producer/);
    await expect(boot(Root)).rejects.toThrow(/can't resolve dependencies of the Producer \(\?\)/);

    @Module({ imports: [registration], providers: [Producer] })
    class ImportingModule {}
    @Module({ imports: [registration, ImportingModule] })
    class Root2 {}
    const app = await boot(Root2);
    expect(app.get(Producer).queue).toBeInstanceOf(RedisAckQueueService);
    await app.close();
  });
});

describe('named queues', () => {
  // A typed topic: the same string at runtime, wherever a topic name goes.
  const topic = defineTopic<string>(uniqueTopic('shared.name'));
  const seen: Record<string, unknown[]> = { default: [], billing: [], audit: [] };

  @Injectable()
  class Handlers {
    constructor(
      @InjectQueue() readonly defaultQueue: RedisAckQueueService,
      @InjectQueue('billing') readonly billing: RedisAckQueueService,
      @InjectQueue('audit') readonly audit: RedisAckQueueService,
    ) {}

    @QueueHandler(topic)
    onDefault(payload: string) {
      seen.default.push(payload);
    }

    @QueueHandler(topic, { queue: 'billing' })
    onBilling(payload: string) {
      seen.billing.push(payload);
    }

    @QueueHandler(topic, { queue: 'audit', concurrency: 2 })
    onAudit(payload: string) {
      seen.audit.push(payload);
    }
  }

  function rootWith(...extra: object[]) {
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: first.connection, prefix: 'main', drainMs }),
        RedisAckQueueModule.forRootAsync({
          name: 'billing',
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: (config: { prefix: string }) => ({ connection: second.connection, drainMs, ...config }),
        }),
        RedisAckQueueModule.forRoot({ name: 'audit', connection: first.connection, prefix: 'audit', drainMs }),
        ...(extra as never[]),
      ],
      providers: [Handlers],
    })
    class Root {}
    return Root;
  }

  it('are independent services, injected with @InjectQueue, each consumed by its own handlers', async () => {
    const app = await boot(rootWith());
    const handlers = app.get(Handlers);
    expect(handlers.defaultQueue).toBe(app.get(RedisAckQueueService));
    expect(handlers.billing).toBe(app.get(getQueueToken('billing')));
    expect(handlers.audit).toBe(app.get(getQueueToken('audit')));
    expect(new Set([handlers.defaultQueue, handlers.billing, handlers.audit]).size).toBe(3);

    await handlers.defaultQueue.push(topic, 'd1');
    await handlers.billing.pushMany(topic, [{ payload: 'b1' }, { payload: 'b2' }]);
    await handlers.audit.push(topic, 'a1');
    await Promise.all(
      [handlers.defaultQueue, handlers.billing, handlers.audit].map((queue) => queue.waitUntilIdle(topic)),
    );
    await eventually(() => seen.default.length + seen.billing.length + seen.audit.length === 4);
    expect(seen).toEqual({ default: ['d1'], billing: ['b1', 'b2'], audit: ['a1'] });

    // Each queue wrote under its own prefix, on its own server.
    const keysOf = async (redis: TestClient, pattern: string) => (await redis.keys(pattern)).length;
    expect(await keysOf(first.redis, `{main:${topic}}:*`)).toBeGreaterThan(0);
    expect(await keysOf(first.redis, `{audit:${topic}}:*`)).toBeGreaterThan(0);
    expect(await keysOf(second.redis, `{bill:${topic}}:*`)).toBeGreaterThan(0);
    expect(await keysOf(first.redis, `{bill:${topic}}:*`)).toBe(0);
    expect(await keysOf(second.redis, `{main:${topic}}:*`)).toBe(0);
    await app.close();
  });

  it('fails startup on two unnamed registrations, saying what to change, and leaves no connection open', async () => {
    const before = await clients();
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: first.connection }),
        RedisAckQueueModule.forRoot({ connection: second.connection }),
      ],
    })
    class Twice {}
    const failure = boot(Twice);
    await expect(failure).rejects.toBeInstanceOf(DuplicateQueueRegistrationError);
    await expect(failure).rejects.toThrow(
      "RedisAckQueueModule registers the default queue twice (forRoot/forRootAsync without a name, or with name: 'default'): " +
        "keep one, or give the other a name (forRoot({ name: 'reports', ... })) and inject it with @InjectQueue('reports')",
    );
    await eventually(async () => (await clients()) === before);
  });

  it('fails startup on two registrations of one name', async () => {
    const before = await clients();
    const failure = boot(rootWith(RedisAckQueueModule.forRoot({ name: 'billing', connection: first.connection })));
    await expect(failure).rejects.toBeInstanceOf(DuplicateQueueRegistrationError);
    await expect(failure).rejects.toThrow(
      `RedisAckQueueModule registers the queue "billing" twice (forRoot/forRootAsync with name: 'billing'): ` +
        'keep one, or give the other a name of its own and inject it with @InjectQueue(thatName)',
    );
    await eventually(async () => (await clients()) === before);
  });

  it('fails startup on a handler of a queue that nothing registers, naming the queues that exist', async () => {
    @Injectable()
    class Stray {
      @QueueHandler(uniqueTopic('stray'), { queue: 'shipping' })
      handle() {}
    }
    const before = await clients();
    const failure = boot(rootWith({ module: class StrayModule {}, providers: [Stray] }));
    await expect(failure).rejects.toBeInstanceOf(UnknownQueueError);
    await expect(failure).rejects.toThrow(
      '@QueueHandler on Stray.handle consumes from the queue "shipping", which no RedisAckQueueModule.forRoot/forRootAsync ' +
        `registers (registered: "default", "billing", "audit"): register it with forRoot({ name: 'shipping', ... }) or fix the handler's queue option`,
    );
    await eventually(async () => (await clients()) === before);
  });
});
