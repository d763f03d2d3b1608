import { Injectable, NotFoundException } from '@nestjs/common';

export type OrderStatus = 'awaiting-payment' | 'paid' | 'cancelled';

export interface Order {
  id: string;
  item: string;
  amount: number;
  /** Who ordered, if known: the ordered group of the order's confirmation mail. */
  customer?: string;
  status: OrderStatus;
  confirmationSent: boolean;
  invoice?: string;
}

/** In-memory orders: the sample's stand-in for a database. */
@Injectable()
export class OrdersStore {
  private readonly orders = new Map<string, Order>();
  private counter = 0;

  create(item: string, amount: number, customer: string | undefined): Order {
    const order: Order = {
      id: `order-${Date.now()}-${++this.counter}`,
      item,
      amount,
      customer,
      status: 'awaiting-payment',
      confirmationSent: false,
    };
    this.orders.set(order.id, order);
    return order;
  }

  get(id: string): Order {
    const order = this.orders.get(id);
    if (!order) throw new NotFoundException(`No order ${id}`);
    return order;
  }

  find(id: string): Order | undefined {
    return this.orders.get(id);
  }

  /** Every order, for the nightly report. */
  all(): Order[] {
    return [...this.orders.values()];
  }
}
