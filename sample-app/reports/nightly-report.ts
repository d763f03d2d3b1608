import { Injectable, Logger } from '@nestjs/common';
import { defineTopic, QueueHandler, type MessageContext } from 'nestjs-redis-ack-queue';
import { OrdersStore } from '../orders/orders.store';

/** The nightly report's topic; the module option `schedules` pushes one message per tick to it. */
export const NIGHTLY_REPORT = defineTopic<{ kind: 'orders' }>('report.nightly');

/**
 * Runs once per tick of the `nightly` schedule (02:00 in REPORT_TZ by default): however many
 * instances of the app run, exactly one message per night is pushed, and one of them handles it.
 */
@Injectable()
export class NightlyReport {
  private readonly logger = new Logger(NightlyReport.name);

  constructor(private readonly store: OrdersStore) {}

  @QueueHandler(NIGHTLY_REPORT)
  report(_payload: { kind: 'orders' }, context: MessageContext): void {
    const orders = this.store.all();
    const cancelled = orders.filter((order) => order.status === 'cancelled').length;
    this.logger.log(`Nightly report ${context.id}: ${orders.length} order(s), ${cancelled} cancelled`);
  }
}
