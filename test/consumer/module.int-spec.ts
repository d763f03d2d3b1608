import { Inject, Injectable, Module, Scope, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import {
  InvalidQueueHandlerError,
  QueueHandlerProvidedTwiceError,
  type MessageContext,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
  RedisConnectionError,
} from '../../lib';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { quietFor, wellBefore } from '../support/waits';

const TOPIC_A = uniqueTopic('module.a');
const TOPIC_B = uniqueTopic('module.b');
const TOPIC_SCOPED = uniqueTopic('module.scoped');
const handled: Record<string, unknown[]> = {};
const record = (topic: string, value: unknown) => (handled[topic] ??= []).push(value);

@Injectable()
class FeatureAHandlers {
  @QueueHandler(TOPIC_A, { concurrency: 2 })
  onA(payload: unknown, context: MessageContext) {
    record(TOPIC_A, { payload, attempt: context.attempt, topic: context.topic });
  }
}

@Module({ providers: [FeatureAHandlers] })
class FeatureAModule {}

@Injectable()
class FeatureBHandlers {
  constructor(private readonly queue: RedisAckQueueService) {}

  @QueueHandler(TOPIC_B)
  async onB(payload: number) {
    record(TOPIC_B, payload);
    // Handlers can push too: the service is injectable anywhere (the module is global here).
    if (payload < 3) await this.queue.push(TOPIC_B, payload + 1);
  }
}

@Module({ providers: [FeatureBHandlers] })
class FeatureBModule {}

let scopedInstances = 0;
@Injectable({ scope: Scope.REQUEST })
class ScopedHandler {
  readonly serial = ++scopedInstances;

  @QueueHandler(TOPIC_SCOPED)
  onMessage() {
    record(TOPIC_SCOPED, this.serial);
  }
}

@Module({ providers: [ScopedHandler] })
class ScopedModule {}

const CONFIG = 'TEST_CONFIG';

@Module({ providers: [{ provide: CONFIG, useValue: {} }], exports: [CONFIG] })
class ConfigModule {}

describe('RedisAckQueueModule', () => {
  const fx = useRedis({ password: 'module-pw' });
  const apps: INestApplicationContext[] = [];

  async function boot(module: object): Promise<INestApplicationContext> {
    // The app logs through the test capture: kept, replayed if the test fails.
    const app = await NestFactory.createApplicationContext(module as never, {
      logger: testLogger(),
      abortOnError: false,
    });
    apps.push(app);
    return app;
  }

  function rootModule(extra: object[], options: Record<string, unknown> = {}) {
    @Module({
      imports: [
        RedisAckQueueModule.forRootAsync({
          isGlobal: true,
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: (config: Record<string, unknown>) => ({ connection: fx.connection, ...config, ...options }),
        }),
        ...(extra as never[]),
      ],
    })
    class RootModule {}
    return RootModule;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('finds handlers in every module (forRootAsync with injected config) and runs them', async () => {
    const app = await boot(rootModule([FeatureAModule, FeatureBModule]));
    const queue = app.get(RedisAckQueueService);
    await queue.push(TOPIC_A, { hello: 'a' });
    await queue.push(TOPIC_B, 1);
    await queue.waitUntilIdle(TOPIC_A);
    await eventually(() => handled[TOPIC_B]?.length === 3);
    expect(handled[TOPIC_A]).toEqual([{ payload: { hello: 'a' }, attempt: 1, topic: TOPIC_A }]);
    expect(handled[TOPIC_B]).toEqual([1, 2, 3]);
    await app.close();
  });

  it('gives a request-scoped handler a fresh instance per message', async () => {
    const app = await boot(rootModule([ScopedModule]));
    const queue = app.get(RedisAckQueueService);
    await queue.pushMany(
      TOPIC_SCOPED,
      [1, 2, 3].map((payload) => ({ payload })),
    );
    await queue.waitUntilIdle(TOPIC_SCOPED);
    expect(new Set(handled[TOPIC_SCOPED]).size).toBe(3);
    await app.close();
  });

  it('runs no handler with consumers: false (a producer-only process)', async () => {
    const topic = TOPIC_A;
    const app = await boot(rootModule([FeatureAModule], { consumers: false }));
    const queue = app.get(RedisAckQueueService);
    const before = handled[topic]?.length ?? 0;
    await queue.push(topic, 'stays');
    // A negative check, so it takes time: a consumer would have taken the message within
    // milliseconds (an idle one is woken by the push).
    await quietFor(300, 'a handler running in a producer-only app');
    expect(await queue.stats(topic)).toMatchObject({ ready: 1 });
    expect(handled[topic]?.length ?? 0).toBe(before);
    // Clean up for the next tests of TOPIC_A: take the message and ack it.
    const [left] = await queue.reserve(topic);
    expect(left.payload).toBe('stays');
    expect(await queue.ack(left)).toBe(true);
    await app.close();
  });

  it('fails startup on two handlers for one topic, naming both', async () => {
    @Injectable()
    class Second {
      @QueueHandler(TOPIC_A)
      again() {}
    }
    @Module({ providers: [Second] })
    class SecondModule {}
    const failure = boot(rootModule([FeatureAModule, SecondModule]));
    await expect(failure).rejects.toBeInstanceOf(InvalidQueueHandlerError);
    await expect(failure).rejects.toThrow(
      `Two @QueueHandler methods for topic "${TOPIC_A}": FeatureAHandlers.onA and Second.again`,
    );
  });

  it('fails startup on a handler class provided in two modules, naming the class and both modules', async () => {
    @Module({ providers: [FeatureAHandlers] })
    class AgainModule {}
    const failure = boot(rootModule([FeatureAModule, AgainModule]));
    await expect(failure).rejects.toBeInstanceOf(QueueHandlerProvidedTwiceError);
    await expect(failure).rejects.toMatchObject({
      code: 'HANDLER_PROVIDED_TWICE',
      handlerClass: 'FeatureAHandlers',
      modules: ['FeatureAModule', 'AgainModule'],
    });
    await expect(failure).rejects.toThrow(
      /^The @QueueHandler class FeatureAHandlers is provided in two modules, FeatureAModule and AgainModule/,
    );
  });

  it('fails startup on an invalid topic or option, naming the class and method', async () => {
    @Injectable()
    class Bad {
      @QueueHandler('not valid')
      handle() {}
    }
    @Module({ providers: [Bad] })
    class BadModule {}
    await expect(boot(rootModule([BadModule]))).rejects.toThrow(
      /Invalid @QueueHandler on Bad\.handle: Invalid topic "not valid"/,
    );

    @Injectable()
    class BadOption {
      @QueueHandler('fine', { concurrency: 0 })
      handle() {}
    }
    @Module({ providers: [BadOption] })
    class BadOptionModule {}
    await expect(boot(rootModule([BadOptionModule]))).rejects.toThrow(/BadOption\.handle: Invalid concurrency 0/);
  });

  it('fails startup within seconds on a wrong password or an unreachable server', async () => {
    const wrong = fx.connectionWith({ password: 'wrong-pw' });
    // Nest reports the failed startup (ExceptionHandler), the service the refused connections.
    expectLogs(/Cannot connect to Redis at/);
    // A good boot and close, measured here and now: the part of a failed boot that is not a timer.
    const baselineStarted = Date.now();
    await (await boot(rootModule([]))).close();
    const baselineMs = Date.now() - baselineStarted;
    let started = Date.now();
    const failure = boot(rootModule([], { connection: wrong }));
    await expect(failure).rejects.toBeInstanceOf(RedisConnectionError);
    await expect(failure).rejects.not.toThrow(/wrong-pw/);
    // At once: not after retrying through the connect timeout.
    expect(Date.now() - started).toBeLessThan(baselineMs + wellBefore(DEFAULTS.connectTimeoutMs));
    started = Date.now();
    await expect(boot(rootModule([], { connection: 'redis://127.0.0.1:1', connectTimeoutMs: 1_000 }))).rejects.toThrow(
      /Cannot connect to Redis at redis:\/\/127\.0\.0\.1:1\/0/,
    );
    // Its own 1 s, not the default connect timeout.
    expect(Date.now() - started).toBeLessThan(baselineMs + 1_000 + wellBefore(DEFAULTS.connectTimeoutMs - 1_000));
  });

  it('closes the connections it opened on shutdown, after the consumers drain', async () => {
    // Summed over every node: on a cluster the app connects to each master.
    const clients = async () =>
      (await Promise.all(fx.nodes().map((node) => node.client('LIST'))))
        .map((list) => String(list).split('\n').filter(Boolean).length)
        .reduce((a, b) => a + b, 0);
    const clientsBefore = await clients();
    const app = await boot(rootModule([FeatureAModule]));
    const queue = app.get(RedisAckQueueService);
    await queue.push(TOPIC_A, 'last');
    await queue.waitUntilIdle(TOPIC_A);
    const done = firstValueFrom(queue.events$.pipe(filter(() => false)), { defaultValue: 'completed' });
    await app.close();
    expect(await done).toBe('completed');
    await eventually(async () => (await clients()) === clientsBefore);
  });

  it('works with forRoot and a client the app owns, which it leaves open', async () => {
    const client = fx.client();
    const topic = uniqueTopic();
    @Injectable()
    class Handler {
      readonly seen: unknown[] = [];
      @QueueHandler(topic)
      handle(payload: unknown) {
        this.seen.push(payload);
      }
    }
    @Module({ imports: [RedisAckQueueModule.forRoot({ connection: client })], providers: [Handler] })
    class Root {}
    const app = await boot(Root);
    await app.get(RedisAckQueueService).push(topic, 'own client');
    await eventually(() => app.get(Handler).seen.length === 1);
    await app.close();
    expect(await client.ping()).toBe('PONG');
  });
});

void Inject;
