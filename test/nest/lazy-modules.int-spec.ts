import { Controller, Inject, Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { LazyModuleLoader, NestFactory } from '@nestjs/core';
import {
  OnQueueEvent,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
  type RedisAckQueueEvent,
  UnknownQueueError,
} from '../../lib';
import { testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const fx = useRedis();
const PROVIDER_TOPIC = uniqueTopic('lazy.provider');
const CONTROLLER_TOPIC = uniqueTopic('lazy.controller');
const EAGER_TOPIC = uniqueTopic('eager');
const SLOW = 'SLOW_DEPENDENCY';

@Injectable()
class LazyHandlers {
  readonly seen: unknown[] = [];
  // A dependency that takes a while: the handler must run on the instance, not on the
  // prototype Nest holds in its place while the module is built.
  constructor(@Inject(SLOW) readonly slow: string) {}

  @QueueHandler(PROVIDER_TOPIC)
  handle(payload: unknown) {
    this.seen.push([payload, this.slow]);
  }
}

@Controller()
class LazyController {
  readonly seen: unknown[] = [];

  @QueueHandler(CONTROLLER_TOPIC)
  handle(payload: unknown) {
    this.seen.push(payload);
  }
}

@Injectable()
class LazyListeners {
  readonly acked: (string | undefined)[] = [];

  @OnQueueEvent('acked', { topic: PROVIDER_TOPIC })
  onAcked(event: RedisAckQueueEvent) {
    this.acked.push(event.id);
  }
}

@Module({
  imports: [RedisAckQueueModule.forLazyModule()],
  providers: [
    LazyHandlers,
    LazyListeners,
    { provide: SLOW, useFactory: () => new Promise((resolve) => setTimeout(() => resolve('built'), 200)) },
  ],
  controllers: [LazyController],
})
class LazyModule {}

@Injectable()
class EagerHandlers {
  readonly seen: unknown[] = [];
  @QueueHandler(EAGER_TOPIC)
  handle(payload: unknown) {
    this.seen.push(payload);
  }
}

// forLazyModule in an eagerly imported module is harmless: the bootstrap finds its handlers once.
@Module({ imports: [RedisAckQueueModule.forLazyModule()], providers: [EagerHandlers] })
class EagerModule {}

describe('handlers of a lazily loaded module', () => {
  let app: INestApplicationContext;

  beforeAll(async () => {
    @Module({
      // Shutdown here waits out drainMs even with no handler running (fixed on another branch): kept short.
      imports: [
        RedisAckQueueModule.forRootAsync({ useFactory: () => ({ connection: fx.connection, drainMs: 500 }) }),
        EagerModule,
      ],
    })
    class Root {}
    app = await NestFactory.createApplicationContext(Root, { logger: testLogger(), abortOnError: false });
  });

  afterAll(async () => {
    await app.close();
  });

  it('start consuming when LazyModuleLoader.load() resolves', async () => {
    const queue = app.get(RedisAckQueueService);
    await queue.push(EAGER_TOPIC, 'eager');
    await queue.waitUntilIdle(EAGER_TOPIC);
    expect(app.get(EagerHandlers).seen).toEqual(['eager']);

    // Pushed before the module exists: nobody consumes them yet.
    await queue.push(PROVIDER_TOPIC, 'waiting');
    await queue.push(CONTROLLER_TOPIC, 'waiting too');

    const lazy = await app.get(LazyModuleLoader).load(() => LazyModule);
    await queue.waitUntilIdle(PROVIDER_TOPIC);
    await queue.waitUntilIdle(CONTROLLER_TOPIC);
    expect(lazy.get(LazyHandlers).seen).toEqual([['waiting', 'built']]);
    expect(lazy.get(LazyController).seen).toEqual(['waiting too']);

    // Loading it again changes nothing (no second consumer); messages keep flowing.
    await app.get(LazyModuleLoader).load(() => LazyModule);
    const later = await queue.push(PROVIDER_TOPIC, 'later');
    await eventually(() => lazy.get(LazyHandlers).seen.length === 2);
    // Its @OnQueueEvent listeners are called too (once each: loaded twice, bound once).
    await eventually(() => lazy.get(LazyListeners).acked.includes(later.id));
    expect(lazy.get(LazyListeners).acked.filter((id) => id === later.id)).toEqual([later.id]);
    expect(lazy.get(LazyHandlers).seen).toEqual([
      ['waiting', 'built'],
      ['later', 'built'],
    ]);
  });

  it('make load() reject when one is invalid, and leave the running app alone', async () => {
    @Injectable()
    class Stray {
      @QueueHandler(uniqueTopic('stray'), { queue: 'shipping' })
      handle() {}
    }
    // Through the deprecated name: forFeature() still brings the hook (without it, load() would resolve).
    @Module({ imports: [RedisAckQueueModule.forFeature()], providers: [Stray] })
    class BadLazyModule {}

    await expect(app.get(LazyModuleLoader).load(() => BadLazyModule)).rejects.toBeInstanceOf(UnknownQueueError);
    const queue = app.get(RedisAckQueueService);
    await queue.push(EAGER_TOPIC, 'still served');
    await eventually(() => app.get(EagerHandlers).seen.length === 2);
  });
});
