import { Injectable, type OnApplicationBootstrap, Scope, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { QueueHandler, RedisAckQueueModule, RedisAckQueueService } from '../../lib';
import { expectLogs, loggedLines, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const fx = useRedis();
const WARNING = /has @QueueHandler methods but no RedisAckQueueModule/;
expectLogs(WARNING);

let testing: TestingModule | undefined;
afterEach(async () => {
  await testing?.close();
  testing = undefined;
});

async function boot(providers: Type[], imports: Parameters<typeof Test.createTestingModule>[0]['imports'] = []) {
  testing = await Test.createTestingModule({ imports, providers }).setLogger(testLogger()).compile();
  await testing.init();
  return testing;
}

// Shutdown waits out drainMs; kept short.
const queueModule = (extra: { consumers?: boolean } = {}) =>
  RedisAckQueueModule.forRoot({ connection: fx.connection, drainMs: 500, ...extra });

describe('a class with @QueueHandler methods in an app without RedisAckQueueModule', () => {
  it('is named once in a warning, however many handler methods it has, and its own onApplicationBootstrap still runs', async () => {
    const ran: unknown[] = [];
    @Injectable()
    class OrderHandlers implements OnApplicationBootstrap {
      readonly label = 'orders';
      @QueueHandler(uniqueTopic('mm.placed'))
      placed() {}
      @QueueHandler(uniqueTopic('mm.cancelled'))
      cancelled() {}
      async onApplicationBootstrap(...args: unknown[]) {
        // Awaited by Nest: the returned promise is passed on.
        await new Promise((resolve) => setImmediate(resolve));
        ran.push({ label: this.label, args });
      }
    }
    await boot([OrderHandlers]);
    const warnings = loggedLines(WARNING);
    expect(warnings).toEqual([
      {
        level: 'warn',
        context: 'RedisAckQueue',
        message:
          'OrderHandlers has @QueueHandler methods but no RedisAckQueueModule.forRoot()/forRootAsync() is imported ' +
          'in this app: its handlers will not consume. Import the module, or ignore this in a unit test that ' +
          'builds the class alone',
        test: expect.any(String) as string,
      },
    ]);
    expect(ran).toEqual([{ label: 'orders', args: [] }]);

    // Once per class: a second app building it says nothing more.
    await testing!.close();
    await boot([OrderHandlers]);
    expect(loggedLines(WARNING)).toHaveLength(1);
    expect(ran).toHaveLength(2);
  });

  it('names the subclass that the app builds, once, and runs the hooks it inherits', async () => {
    const ran: string[] = [];
    class BaseHandlers {
      @QueueHandler(uniqueTopic('mm.base'))
      base() {}
      onApplicationBootstrap() {
        ran.push('base');
      }
    }
    @Injectable()
    class RefundHandlers extends BaseHandlers {
      @QueueHandler(uniqueTopic('mm.refund'))
      refund() {}
    }
    await boot([RefundHandlers]);
    expect(loggedLines(WARNING).map(({ message }) => message.split(' ')[0])).toEqual(['RefundHandlers']);
    expect(ran).toEqual(['base']);
  });
});

describe('a class with @QueueHandler methods in an app with RedisAckQueueModule', () => {
  it('raises no warning and consumes', async () => {
    const topic = uniqueTopic('mm.consumed');
    const seen: unknown[] = [];
    @Injectable()
    class PaymentHandlers {
      @QueueHandler(topic)
      paid(payload: unknown) {
        seen.push(payload);
      }
      @QueueHandler(uniqueTopic('mm.refunded'))
      refunded() {}
    }
    const app = await boot([PaymentHandlers], [queueModule()]);
    await app.get(RedisAckQueueService).push(topic, 'paid');
    await eventually(() => seen.length === 1);
    expect(loggedLines(WARNING)).toEqual([]);
  });

  it('raises no warning for a transient handler class (Nest runs the hooks of its instances too)', async () => {
    let hooked = 0;
    @Injectable({ scope: Scope.TRANSIENT })
    class TransientHandlers {
      @QueueHandler(uniqueTopic('mm.transient'))
      handle() {}
      onApplicationBootstrap() {
        hooked++;
      }
    }
    @Injectable()
    class UsesTransient {
      constructor(readonly handlers: TransientHandlers) {}
    }
    await boot([TransientHandlers, UsesTransient], [queueModule()]);
    expect(hooked).toBeGreaterThan(0);
    expect(loggedLines(WARNING)).toEqual([]);
  });

  it('raises no warning with consumers: false (a producer-only process)', async () => {
    @Injectable()
    class ProducerSideHandlers {
      @QueueHandler(uniqueTopic('mm.producer'))
      handle() {}
    }
    await boot([ProducerSideHandlers], [queueModule({ consumers: false })]);
    expect(loggedLines(WARNING)).toEqual([]);
  });
});
