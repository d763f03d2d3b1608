import { BadGatewayException, GatewayTimeoutException, Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { RequestTimeoutError } from 'nestjs-redis-ack-queue';
import { RedisAckQueueRecord } from 'nestjs-redis-ack-queue/microservices';
import { lastValueFrom } from 'rxjs';
import type { Order } from '../orders/orders.store';
import { type Bill, BILLING_CLIENT, BILLING_PATTERNS, type OrderPlaced, type Quote } from './billing.messages';

/** The HTTP app's side of the billing microservice: one event and two requests, typed. */
@Injectable()
export class BillingClient {
  constructor(@Inject(BILLING_CLIENT) private readonly client: ClientProxy) {}

  /**
   * Tells billing that an order was placed; resolves once the event is stored in Redis. Billing
   * need not be up: the event waits for it. The order id is the message id, so that a retried
   * request cannot emit it twice while it waits.
   */
  async orderPlaced({ id, amount, customer }: Order): Promise<void> {
    // Plain JSON: a guest order has no customer field (undefined is no JSON value).
    const event: OrderPlaced = customer === undefined ? { orderId: id, amount } : { orderId: id, amount, customer };
    await lastValueFrom(this.client.emit(BILLING_PATTERNS.orderPlaced, new RedisAckQueueRecord(event, { id })));
  }

  /** What `amount` costs, tax included, as billing computes it. */
  quote(amount: number): Promise<Quote> {
    return this.request<Quote>(BILLING_PATTERNS.quote, { amount });
  }

  /** The order's bill, or null while billing has not handled its event. */
  bill(orderId: string): Promise<Bill | null> {
    return this.request<Bill | null>(BILLING_PATTERNS.bill, { orderId });
  }

  /** A request's reply; 504 when billing does not answer in time (it is down), 502 when it answers an error. */
  private async request<T>(pattern: string, data: unknown): Promise<T> {
    try {
      return await lastValueFrom(this.client.send<T>(pattern, data));
    } catch (error) {
      if (error instanceof RequestTimeoutError) throw new GatewayTimeoutException('The billing service did not answer');
      throw new BadGatewayException('The billing service answered with an error');
    }
  }
}
