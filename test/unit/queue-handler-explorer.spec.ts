import { Controller, Injectable, Module, type ModuleMetadata } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { DEFAULT_QUEUE, QUEUE_REGISTRATION } from '../../lib/nest/queue-tokens';
import {
  InvalidQueueHandlerError,
  QueueHandler,
  REDIS_ACK_QUEUE_OPTIONS,
  RedisAckQueueService,
  type MessageContext,
  type QueueHandlerFn,
  type QueueHandlerOptions,
  type RedisAckQueueModuleOptions,
} from '../../lib';
import { QueueHandlerExplorer } from '../../lib/nest/queue-handler.explorer';

/** The three calls the explorer makes of the service, recorded (no Redis behind it). */
function stubService() {
  const consumed: { topic: string; handler: QueueHandlerFn; options: QueueHandlerOptions; close: jest.Mock }[] = [];
  const service = {
    consume: jest.fn((topic: string, handler: QueueHandlerFn, options: QueueHandlerOptions) => {
      const close = jest.fn(() => Promise.resolve());
      consumed.push({ topic, handler, options, close });
      return { topic, running: 0, close };
    }),
    checkTopic: jest.fn((_topic: string) => Promise.resolve()),
    close: jest.fn((_drainMs?: number) => Promise.resolve()),
  };
  return { service, consumed };
}

let service: ReturnType<typeof stubService>['service'];
let consumed: ReturnType<typeof stubService>['consumed'];
let app: TestingModule | undefined;

beforeEach(() => ({ service, consumed } = stubService()));
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app of `imports`, the explorer and the stub service; init runs onApplicationBootstrap. */
async function boot(metadata: ModuleMetadata, options: RedisAckQueueModuleOptions = {}): Promise<TestingModule> {
  app = await Test.createTestingModule({
    ...metadata,
    imports: [DiscoveryModule, ...(metadata.imports ?? [])],
    providers: [
      QueueHandlerExplorer,
      { provide: RedisAckQueueService, useValue: service },
      { provide: REDIS_ACK_QUEUE_OPTIONS, useValue: options },
      // What a forRoot registration provides its explorer: its name, options and service.
      { provide: QUEUE_REGISTRATION, useValue: { name: DEFAULT_QUEUE, options, service } },
      ...(metadata.providers ?? []),
    ],
  }).compile();
  try {
    await app.init();
  } catch (error) {
    app = undefined;
    throw error;
  }
  return app;
}

@Injectable()
class OrdersHandler {
  readonly seen: string[] = [];
  @QueueHandler('orders', { concurrency: 4 })
  handle(payload: string, context: MessageContext) {
    this.seen.push(`${payload}@${context.id}`);
    return 'handled';
  }
  notAHandler() {}
}
@Module({ providers: [OrdersHandler] })
class OrdersModule {}

@Controller()
class MailController {
  @QueueHandler('mail')
  send() {}
}
@Module({ controllers: [MailController] })
class MailModule {}

@Injectable()
class AuditHandler {
  @QueueHandler('audit')
  handle() {}
}
@Injectable()
class SecondOrdersHandler {
  @QueueHandler('orders')
  process() {}
}
@Injectable()
class BadTopicHandler {
  @QueueHandler('bad topic!')
  handle() {}
}
@Injectable()
class BadOptionHandler {
  @QueueHandler('fine', { concurrency: 0 })
  handle() {}
}

describe('QueueHandlerExplorer', () => {
  it('starts one consumer per @QueueHandler, across modules and on controllers, bound to its instance', async () => {
    await boot({ imports: [OrdersModule, MailModule], providers: [AuditHandler] });
    expect(consumed.map((c) => c.topic).sort()).toEqual(['audit', 'mail', 'orders']);
    expect(service.checkTopic.mock.calls.map(([topic]) => topic).sort()).toEqual(['audit', 'mail', 'orders']);
    const orders = consumed.find((c) => c.topic === 'orders')!;
    expect(orders.options).toEqual({ concurrency: 4 });
    expect(await orders.handler('p', { id: 'm1' } as MessageContext)).toBe('handled');
    expect(app!.get(OrdersHandler, { strict: false }).seen).toEqual(['p@m1']);
  });

  it('closes every consumer it started when the app shuts down', async () => {
    await boot({ imports: [OrdersModule, MailModule] });
    await app!.close();
    app = undefined;
    for (const consumer of consumed) expect(consumer.close).toHaveBeenCalledTimes(1);
  });

  it('skips useValue and useFactory providers (no class of their own to read)', async () => {
    await boot({
      providers: [
        { provide: 'AUDIT_VALUE', useValue: new AuditHandler() },
        { provide: 'ORDERS_FACTORY', useFactory: () => new SecondOrdersHandler() },
      ],
    });
    expect(service.consume).not.toHaveBeenCalled();
  });

  it('refuses two handlers for one topic, naming both, and closes the service', async () => {
    const refused = boot({ imports: [OrdersModule], providers: [SecondOrdersHandler] });
    await expect(refused).rejects.toThrow(InvalidQueueHandlerError);
    await expect(refused).rejects.toThrow(
      /"orders".*(OrdersHandler\.handle and SecondOrdersHandler\.process|SecondOrdersHandler\.process and OrdersHandler\.handle)/,
    );
    expect(service.consume).not.toHaveBeenCalled();
    expect(service.close).toHaveBeenCalledWith(0);
  });

  it.each([
    [BadTopicHandler, /Invalid @QueueHandler on BadTopicHandler\.handle: Invalid topic "bad topic!"/],
    [BadOptionHandler, /Invalid @QueueHandler on BadOptionHandler\.handle: Invalid concurrency 0/],
  ])('refuses %p, naming Class.method', async (handler, message) => {
    const refused = boot({ providers: [handler] });
    await expect(refused).rejects.toThrow(message);
    await expect(refused).rejects.toMatchObject({ code: 'INVALID_HANDLER', where: `${handler.name}.handle` });
    expect(service.consume).not.toHaveBeenCalled();
    expect(service.close).toHaveBeenCalledWith(0);
  });

  it('fails startup (closing the service) when a topic does not match its layout in Redis', async () => {
    service.checkTopic.mockRejectedValueOnce(new Error('partition mismatch'));
    await expect(boot({ providers: [AuditHandler] })).rejects.toThrow('partition mismatch');
    expect(service.consume).not.toHaveBeenCalled();
    expect(service.close).toHaveBeenCalledWith(0);
  });

  it('does nothing with consumers: false, not even checking the handlers', async () => {
    await boot({ imports: [OrdersModule], providers: [SecondOrdersHandler, BadTopicHandler] }, { consumers: false });
    expect(service.consume).not.toHaveBeenCalled();
    expect(service.checkTopic).not.toHaveBeenCalled();
    expect(service.close).not.toHaveBeenCalled();
  });
});
