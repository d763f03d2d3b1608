/**
 * Typed topics at compile time. Each `// @ts-expect-error` line must stay an error: when a
 * change makes it compile, tsc reports the directive as unused and test/unit/types.spec.ts fails.
 */
import {
  defineTopic,
  type MessageContext,
  QueueHandler,
  type RedisAckQueueService,
  type ReservedMessage,
  type Topic,
} from '../../lib';

interface OrderCreated {
  orderId: string;
  amount: number;
}
interface Refund {
  refundId: string;
}

const orderCreated = defineTopic<OrderCreated>('order.created');
const refunds = defineTopic<Refund>('refunds');

export async function producer(queue: RedisAckQueueService): Promise<void> {
  // The right payload, and a typed topic wherever a topic name goes.
  await queue.push(orderCreated, { orderId: 'a', amount: 1 }, { id: 'a' });
  await queue.pushMany(orderCreated, [{ payload: { orderId: 'b', amount: 2 }, delayMs: 10 }]);
  await queue.stats(orderCreated);
  await queue.waitUntilIdle(orderCreated);
  const name: string = orderCreated;

  // @ts-expect-error a payload of another type
  await queue.push(orderCreated, { refundId: 'r' });
  // @ts-expect-error a field of the wrong type
  await queue.push(orderCreated, { orderId: 'a', amount: '1' });
  // @ts-expect-error a missing field
  await queue.push(orderCreated, { orderId: 'a' });
  const partial = { orderId: 'a' };
  // @ts-expect-error a value of a wider type: the topic alone decides the payload type
  await queue.push(orderCreated, partial);
  const unknownValue: unknown = JSON.parse('{}');
  // @ts-expect-error an unknown value must be narrowed first
  await queue.push(orderCreated, unknownValue);
  // @ts-expect-error the same in pushMany
  await queue.pushMany(orderCreated, [{ payload: partial }]);
  // @ts-expect-error another type in pushMany
  await queue.pushMany(orderCreated, [{ payload: { refundId: 'r' } }]);
  // @ts-expect-error a topic of another payload type where a typed one is expected
  const wrong: Topic<OrderCreated> = refunds;

  // Plain string topics take any payload, as before.
  await queue.push('anything', { whatever: true });
  await queue.push('anything', 42);
  void [name, wrong];
}

export async function keyModes(queue: RedisAckQueueService): Promise<void> {
  // A push without a key mode answers a PushResult, as before: its `duplicate` is a boolean.
  const plain: boolean = (await queue.push(orderCreated, { orderId: 'a', amount: 1 })).duplicate;
  const many: boolean[] = (await queue.pushMany('plain', [{ payload: 1 }])).map((result) => result.duplicate);
  // With one, what the push did to its key, each flag readable on every answer.
  const debounce = { key: 'order:a', delayMs: 1_000 };
  const keyed = await queue.push(orderCreated, { orderId: 'a', amount: 2 }, { debounce });
  const replaced: true | undefined = keyed.debounced;
  const keyedMany = await queue.pushMany(orderCreated, [{ payload: { orderId: 'a', amount: 3 }, debounce }]);
  const superseded: (true | undefined)[] = keyedMany.map((result) => result.superseded);
  // @ts-expect-error a keyed answer's duplicate may be absent (a debounced or superseded push)
  const maybe: boolean = keyed.duplicate;
  // @ts-expect-error supersede's running is 'cancel' or 'keep'
  await queue.push('plain', 1, { supersede: { key: 'k', running: 'stop' } });
  // @ts-expect-error a flow's node takes no key mode
  await queue.pushFlow({ topic: 'plain', payload: 1, options: { throttle: { key: 'k', windowMs: 1 } } });
  void [plain, many, replaced, superseded, maybe];
}

export async function consumer(queue: RedisAckQueueService): Promise<void> {
  // reserve and deadLetters infer the payload type from the topic.
  const [message] = await queue.reserve(orderCreated);
  const amount: number = message.payload.amount;
  // @ts-expect-error the payload is an OrderCreated, not a Refund
  void message.payload.refundId;
  const dead = await queue.deadLetters(orderCreated);
  const orderId: string | undefined = dead[0].payload?.orderId;
  const untyped: ReservedMessage<unknown>[] = await queue.reserve('plain');

  queue.consume(orderCreated, (payload, context) => void [payload.orderId, context.attempt]);
  queue.consume(orderCreated, (payload: unknown) => payload);
  // @ts-expect-error a handler whose first parameter cannot take an OrderCreated
  queue.consume(orderCreated, (payload: Refund) => payload);
  queue.consume('plain', (payload: number) => payload);
  void [amount, orderId, untyped];
}

export class OrderHandlers {
  @QueueHandler(orderCreated)
  onOrder(payload: OrderCreated, context: MessageContext) {
    return [payload.orderId, context.id];
  }

  @QueueHandler(orderCreated, { concurrency: 2 })
  async onOrderLoosely(payload: { orderId: string }): Promise<void> {
    await Promise.resolve(payload.orderId);
  }

  @QueueHandler(orderCreated)
  onAnyOrder() {}

  // @ts-expect-error the first parameter cannot take an OrderCreated
  @QueueHandler(orderCreated)
  onRefund(payload: Refund) {
    return payload.refundId;
  }

  // @ts-expect-error the second parameter is the MessageContext
  @QueueHandler(orderCreated)
  onOrderWithWrongContext(payload: OrderCreated, context: string) {
    return [payload, context];
  }

  // A plain string topic accepts any first parameter, as before.
  @QueueHandler('plain.topic', { queue: 'billing' })
  onPlain(payload: number) {
    return payload;
  }
}
