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

/** A customer's orders as the summary handler last counted them. */
export interface CustomerSummary {
  customer: string;
  orders: number;
  total: number;
  /** How many times it was computed: fewer than the orders when they came in a burst. */
  computations: number;
}

/** One order as its pick (a child of a shipment's flow) returned it. */
export interface PickedItem {
  orderId: string;
  item: string;
}

/** Several orders sent in one parcel: a flow, whose parent dispatches once every order was picked. */
export interface Shipment {
  id: string;
  orderIds: string[];
  status: 'picking' | 'dispatched';
  /** What the picks returned, as the parent read them with `context.childResults()`. */
  picked?: PickedItem[];
  tracking?: string;
  pickupAt?: string;
  /** The delivery of the parent that dispatched it: above 1 after a failed pickup booking. */
  attempt?: number;
}

/** In-memory orders: the sample's stand-in for a database. */
@Injectable()
export class OrdersStore {
  private readonly orders = new Map<string, Order>();
  private readonly summaries = new Map<string, CustomerSummary>();
  private readonly shipments = new Map<string, Shipment>();
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

  /** Counts a customer's orders and their total again. */
  summarize(customer: string): CustomerSummary {
    const theirs = this.all().filter((order) => order.customer === customer);
    const summary = {
      customer,
      orders: theirs.length,
      total: theirs.reduce((sum, order) => sum + order.amount, 0),
      computations: (this.summaries.get(customer)?.computations ?? 0) + 1,
    };
    this.summaries.set(customer, summary);
    return summary;
  }

  summaryOf(customer: string): CustomerSummary | undefined {
    return this.summaries.get(customer);
  }

  createShipment(orderIds: string[]): Shipment {
    const shipment: Shipment = { id: `shipment-${Date.now()}-${++this.counter}`, orderIds, status: 'picking' };
    this.shipments.set(shipment.id, shipment);
    return shipment;
  }

  shipment(id: string): Shipment {
    const shipment = this.shipments.get(id);
    if (!shipment) throw new NotFoundException(`No shipment ${id}`);
    return shipment;
  }

  dispatched(id: string, outcome: Required<Pick<Shipment, 'picked' | 'tracking' | 'pickupAt' | 'attempt'>>): void {
    Object.assign(this.shipment(id), { status: 'dispatched', ...outcome });
  }

  /** Every order, for the nightly report. */
  all(): Order[] {
    return [...this.orders.values()];
  }
}
