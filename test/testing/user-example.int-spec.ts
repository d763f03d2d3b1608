// The testing guide's example (docs/testing.md) as an app's test file: the app's module as written for production
// (Redis from its config), pointed at a private server by the testing entry point.
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { type MessageContext, QueueHandler, RedisAckQueueModule, RedisAckQueueService } from 'nestjs-redis-ack-queue';
import {
  createMessageContext,
  deadLettersOf,
  messagesOf,
  overrideQueueForTesting,
  startTestRedis,
  type TestRedis,
} from 'nestjs-redis-ack-queue/testing';
import { redisServerBinary } from '../../support/redis-processes/redis-binary';
import { expectLogs, testLogger } from '../support/capture-logs';

interface OrderCreated {
  orderId: string;
  total: number;
}

@Injectable()
class OrderHandlers {
  readonly emailed: string[] = [];

  @QueueHandler('orders.created')
  onCreated(order: OrderCreated, context: MessageContext): void {
    context.progress({ step: 'charging' });
    if (order.total < 0) throw new Error(`order ${order.orderId}: negative total`);
  }

  @QueueHandler('orders.email')
  onEmail(order: OrderCreated): void {
    this.emailed.push(order.orderId);
  }
}

@Module({
  imports: [
    RedisAckQueueModule.forRootAsync({
      useFactory: () => ({ connection: process.env.REDIS_URL ?? 'redis://redis.internal:6379', maxAttempts: 1 }),
    }),
  ],
  providers: [OrderHandlers],
})
class AppModule {}

describe('orders (the testing guide example)', () => {
  let redis: TestRedis;
  let moduleRef: TestingModule;
  const charged: OrderCreated[] = [];

  beforeAll(async () => {
    redis = await startTestRedis({ binary: redisServerBinary() });
  });
  afterAll(async () => {
    await redis.stop();
  });

  beforeEach(async () => {
    // setLogger: the harness's log capture, not part of the README's example.
    const builder = Test.createTestingModule({ imports: [AppModule] }).setLogger(testLogger());
    moduleRef = await overrideQueueForTesting(builder, {
      connection: redis.url,
      handlers: { 'orders.email': (order: OrderCreated) => void charged.push(order) },
    }).compile();
    await moduleRef.init();
  });
  afterEach(async () => {
    await moduleRef.close();
  });

  it('handles an order, runs the fake instead of the email handler, and keeps a failed one as a dead letter', async () => {
    expectLogs(/o-2 of "orders.created" went to the dead letters/); // the harness's, not the README's
    const queue = moduleRef.get(RedisAckQueueService);
    await queue.push('orders.created', { orderId: 'o-1', total: 10 }, { id: 'o-1' });
    await queue.push('orders.created', { orderId: 'o-2', total: -1 }, { id: 'o-2' });
    await queue.push('orders.email', { orderId: 'o-1', total: 10 });
    await queue.waitUntilIdle('orders.created');
    await queue.waitUntilIdle('orders.email');

    expect(charged).toEqual([{ orderId: 'o-1', total: 10 }]);
    expect(moduleRef.get(OrderHandlers).emailed).toEqual([]);
    const messages = await messagesOf(queue, 'orders.created');
    expect(messages.map(({ id, state }) => ({ id, state }))).toEqual([
      { id: 'o-1', state: 'completed' },
      { id: 'o-2', state: 'dead' },
    ]);
    const [dead] = await deadLettersOf<OrderCreated>(queue, 'orders.created');
    expect(dead).toMatchObject({ id: 'o-2', payload: { orderId: 'o-2' }, attempt: 1 });
    expect(dead.error).toContain('negative total');
  });

  it('unit-tests a handler method with a MessageContext', () => {
    const context = createMessageContext({ topic: 'orders.created' });
    new OrderHandlers().onCreated({ orderId: 'o-3', total: 5 }, context);
    expect(context.calls.progress).toEqual([{ step: 'charging' }]);
  });
});
