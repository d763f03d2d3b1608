import { Injectable, Logger, UsePipes, ValidationPipe } from '@nestjs/common';
import { type MessageContext, QueueHandler } from 'nestjs-redis-ack-queue';
import { SampleConfig } from '../sample.config';
import { OrdersStore } from './orders.store';
// A value import: the ValidationPipe reads the payload's class from the parameter's design type.
import { CustomerMessage, OrderMessage, TOPICS } from './topics';

/** What the mail provider allows, fleet-wide (a decorator option is read once, at class definition). */
const MAILS_PER_SECOND = Number(process.env.MAILS_PER_SECOND ?? 20);

/** Stands in for a mail client that honours an AbortSignal, as fetch and most SDKs do. */
function sendMail(latencyMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, latencyMs);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    });
  });
}

/**
 * The consumers of the sample: each message is acked only when its handler resolves. The
 * ValidationPipe checks every payload first: one that is not an OrderMessage is dead-lettered
 * at once as `rejected` (retrying cannot fix it).
 */
@UsePipes(new ValidationPipe({ transform: true }))
@Injectable()
export class OrderHandlers {
  private readonly logger = new Logger(OrderHandlers.name);

  constructor(
    private readonly store: OrdersStore,
    private readonly config: SampleConfig,
  ) {}

  /**
   * The confirmation mail. The mail provider takes at most MAILS_PER_SECOND mails a second for all
   * our instances together: a fleet-wide rate limit, kept in Redis. Each customer's confirmations are
   * an ordered group (see the controller): one at a time, in order. A 429 from the provider would
   * call `context.rateLimited(retryAfterMs)`, holding the group without spending an attempt.
   */
  @QueueHandler(TOPICS.created, { concurrency: 5, rateLimit: { max: MAILS_PER_SECOND, perMs: 1_000 } })
  async sendConfirmation({ orderId }: OrderMessage, context: MessageContext): Promise<void> {
    await sendMail(this.config.mailLatencyMs, context.signal);
    const order = this.store.find(orderId);
    if (order) order.confirmationSent = true;
    this.logger.log(`Confirmation sent for ${orderId} (attempt ${context.attempt})`);
  }

  @QueueHandler(TOPICS.paymentTimeout)
  cancelIfUnpaid({ orderId }: OrderMessage): void {
    const order = this.store.find(orderId);
    if (order?.status === 'awaiting-payment') {
      order.status = 'cancelled';
      this.logger.log(`Order ${orderId} cancelled: not paid in time`);
    }
  }

  /** A customer's summary: pushed with `debounce`, so a burst of their orders computes it once. */
  @QueueHandler(TOPICS.customerSummary)
  summarize({ customer }: CustomerMessage): void {
    const { orders, computations } = this.store.summarize(customer);
    this.logger.log(`Summary of ${customer}: ${orders} order(s), computation ${computations}`);
  }

  /** Fails now and then, to show retries with backoff and, after three failures, a dead letter. */
  @QueueHandler(TOPICS.invoice, { maxAttempts: 3, backoff: { type: 'exponential', delayMs: 200, jitter: 0 } })
  renderInvoice({ orderId }: OrderMessage, context: MessageContext): void {
    if (Math.random() < this.config.invoiceFailureRate) {
      throw new Error(`Invoice renderer unavailable (attempt ${context.attempt} of ${context.maxAttempts})`);
    }
    const order = this.store.find(orderId);
    if (order) order.invoice = `invoice-${orderId}.pdf`;
  }
}
