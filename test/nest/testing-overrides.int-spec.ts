import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  InvalidQueueHandlerError,
  type MessageContext,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
} from '../../lib';
import { testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const fx = useRedis();
const topic = uniqueTopic('override');
const realCalls: unknown[] = [];

@Injectable()
class OrderHandlers {
  @QueueHandler(topic)
  onOrder(payload: unknown) {
    realCalls.push(payload);
  }
}

// Shutdown here waits out drainMs even with no handler running (fixed on another branch): kept short.
@Module({
  imports: [RedisAckQueueModule.forRootAsync({ useFactory: () => ({ connection: fx.connection, drainMs: 500 }) })],
  providers: [OrderHandlers],
})
class AppModule {}

let testing: TestingModule | undefined;
afterEach(async () => {
  await testing?.close();
  testing = undefined;
});

/** Connections open on the server: a failed startup must leave none behind. */
const clients = async () =>
  String(await fx.nodes()[0].client('LIST'))
    .split('\n')
    .filter(Boolean).length;

async function pushAndDrain(payload: unknown): Promise<void> {
  const queue = testing!.get(RedisAckQueueService);
  await queue.push(topic, payload);
  await queue.waitUntilIdle(topic);
}

describe('a handler class replaced in a TestingModule', () => {
  it('consumes through the method of the same name of a useValue mock', async () => {
    const onOrder = jest.fn((_payload: unknown, _context: MessageContext) => Promise.resolve());
    testing = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(testLogger())
      .overrideProvider(OrderHandlers)
      .useValue({ onOrder })
      .compile();
    await testing.init();
    await pushAndDrain({ id: 'mocked' });
    await eventually(() => onOrder.mock.calls.length === 1);
    expect(onOrder.mock.calls[0][0]).toEqual({ id: 'mocked' });
    expect(onOrder.mock.calls[0][1]).toMatchObject({ topic, attempt: 1 });
    expect(realCalls).toEqual([]);
  });

  it('consumes through a useFactory replacement and through a useClass replacement that lacks the decorator', async () => {
    const fromFactory: unknown[] = [];
    testing = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(testLogger())
      .overrideProvider(OrderHandlers)
      .useFactory({ factory: () => ({ onOrder: (payload: unknown) => void fromFactory.push(payload) }) })
      .compile();
    await testing.init();
    await pushAndDrain('factory');
    await eventually(() => fromFactory.length === 1);
    await testing.close();

    const fromClass: unknown[] = [];
    class FakeOrderHandlers {
      onOrder(payload: unknown) {
        fromClass.push(payload);
      }
    }
    testing = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(testLogger())
      .overrideProvider(OrderHandlers)
      .useClass(FakeOrderHandlers)
      .compile();
    await testing.init();
    await pushAndDrain('class');
    await eventually(() => fromClass.length === 1);
    expect(realCalls).toEqual([]);
  });

  it('fails startup, saying why, when the replacement lacks the method', async () => {
    const before = await clients();
    testing = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(testLogger())
      .overrideProvider(OrderHandlers)
      .useValue({ somethingElse: () => undefined })
      .compile();
    const failure = testing.init();
    await expect(failure).rejects.toBeInstanceOf(InvalidQueueHandlerError);
    await expect(failure).rejects.toThrow(
      'OrderHandlers.onOrder is a @QueueHandler, but the provider that replaces its class (overrideProvider, useValue or useFactory) ' +
        'has no method "onOrder": give the replacement a onOrder(payload, context) method, or do not replace the class',
    );
    await eventually(async () => (await clients()) === before);
    testing = undefined;
  });

  it('still runs the real class when nothing replaces it', async () => {
    testing = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(testLogger())
      .compile();
    await testing.init();
    await pushAndDrain('real');
    await eventually(() => realCalls.length === 1);
    expect(realCalls).toEqual(['real']);
  });
});
