import { Injectable } from '@nestjs/common';
import type { Bill, OrderPlaced, Quote } from './billing.messages';

/** The bills, in memory: the billing microservice's stand-in for a database. */
@Injectable()
export class BillingLedger {
  private readonly bills = new Map<string, Bill>();

  /**
   * Records the bill of an order once: an event is delivered at least once (again after a
   * crash before its ack), so a second delivery finds the bill and keeps it.
   */
  record({ orderId, customer }: OrderPlaced, quote: Quote): { bill: Bill; recorded: boolean } {
    const known = this.bills.get(orderId);
    if (known) return { bill: known, recorded: false };
    const bill: Bill = { orderId, ...(customer === undefined ? {} : { customer }), ...quote };
    this.bills.set(orderId, bill);
    return { bill, recorded: true };
  }

  find(orderId: string): Bill | undefined {
    return this.bills.get(orderId);
  }
}
