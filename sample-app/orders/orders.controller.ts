import { BadRequestException, Body, Controller, Get, HttpCode, NotFoundException, Param, Post } from '@nestjs/common';
import { RedisAckQueueService } from 'nestjs-redis-ack-queue';
import { BillingClient } from '../billing/billing.client';
import type { Bill, Quote } from '../billing/billing.messages';
import { SampleConfig } from '../sample.config';
import { type CustomerSummary, OrdersStore, type Order } from './orders.store';
import { TOPICS } from './topics';

@Controller()
export class OrdersController {
  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly store: OrdersStore,
    private readonly config: SampleConfig,
    private readonly billing: BillingClient,
  ) {}

  /** Accepts an order: confirm it now, cancel it later unless it gets paid, and tell billing. */
  @Post('orders')
  @HttpCode(202)
  async create(@Body() body: { item?: unknown; amount?: unknown; customer?: unknown }): Promise<Order> {
    const { item, amount, customer } = body ?? {};
    if (typeof item !== 'string' || typeof amount !== 'number' || !(amount > 0) || !isCustomer(customer)) {
      throw new BadRequestException('Send { "item": string, "amount": positive number, "customer"?: string }');
    }
    const order = this.store.create(item, amount, customer);
    // The order id doubles as message id: a retried request cannot enqueue twice. A customer's
    // confirmations are an ordered group: they go out one at a time, in the order of the orders.
    const group = customer === undefined ? undefined : `customer:${customer}`;
    await this.queue.push(TOPICS.created, { orderId: order.id }, { id: order.id, group });
    await this.queue.push(
      TOPICS.paymentTimeout,
      { orderId: order.id },
      { id: order.id, delayMs: this.config.paymentTimeoutMs },
    );
    await this.queue.push(TOPICS.invoice, { orderId: order.id }, { id: order.id });
    // The customer's summary is computed once their orders come to a pause: each order's push
    // postpones the pending one (and gives it its payload) instead of adding another.
    if (customer !== undefined) {
      const debounce = { key: `customer:${customer}`, delayMs: this.config.summaryDelayMs };
      await this.queue.push(TOPICS.customerSummary, { customer }, { debounce });
    }
    // An event for the billing microservice, another process (see sample-app/billing/).
    await this.billing.orderPlaced(order);
    return order;
  }

  /** Pays an order: its payment timeout, a delayed message, is cancelled at once (it would do nothing anyway). */
  @Post('orders/:id/pay')
  async pay(@Param('id') id: string): Promise<Order> {
    const order = this.store.get(id);
    if (order.status === 'awaiting-payment') {
      order.status = 'paid';
      await this.queue.cancel(TOPICS.paymentTimeout, order.id);
    }
    return order;
  }

  @Get('orders/:id')
  get(@Param('id') id: string): Order {
    return this.store.get(id);
  }

  /** What the order costs, tax included: a request answered by the billing microservice. */
  @Get('orders/:id/quote')
  quote(@Param('id') id: string): Promise<Quote> {
    return this.billing.quote(this.store.get(id).amount);
  }

  /** The order's bill, which the billing microservice recorded on the order's event (404 until then). */
  @Get('orders/:id/bill')
  async bill(@Param('id') id: string): Promise<Bill> {
    const bill = await this.billing.bill(this.store.get(id).id);
    if (!bill) throw new NotFoundException(`No bill for ${id} yet`);
    return bill;
  }

  /** A customer's orders and their total, as last computed (404 until the first summary ran). */
  @Get('customers/:name/summary')
  summary(@Param('name') name: string): CustomerSummary {
    const summary = this.store.summaryOf(name);
    if (!summary) throw new NotFoundException(`No summary of ${name} yet`);
    return summary;
  }

  /** Each topic's counts and its dead letters. */
  @Get('queues')
  async queues() {
    // As names: each topic's payload type does not matter here.
    const topics: string[] = Object.values(TOPICS);
    return Promise.all(
      topics.map(async (topic) => ({
        topic,
        ...(await this.queue.stats(topic)),
        deadLetters: (await this.queue.deadLetters(topic, { limit: 20 })).map(({ id, reason, error, attempt }) => ({
          id,
          reason,
          error: error?.split('\n')[0] ?? null,
          attempt,
        })),
      })),
    );
  }
}

/** No customer (a guest order), or a name that can be a group's (1-100 characters). */
function isCustomer(value: unknown): value is string | undefined {
  return (
    value === undefined ||
    (typeof value === 'string' && value.length > 0 && value.length <= 100 && !value.includes('\0'))
  );
}
