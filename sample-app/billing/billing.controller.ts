import { Controller, Logger, UsePipes, ValidationPipe, type ValidationError } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { RedisAckQueueContext, RedisAckQueueRejectException } from 'nestjs-redis-ack-queue/microservices';
import { SampleConfig } from '../sample.config';
import { BillingLedger } from './billing.ledger';
// Value imports: the ValidationPipe reads each payload's class from the parameter's design type.
import { type Bill, BILLING_PATTERNS, BillRequest, OrderPlaced, type Quote, QuoteRequest } from './billing.messages';
import { quoteOf } from './pricing';

/** A payload that fails validation is refused: retrying cannot fix it. */
function refuse(errors: ValidationError[]): RedisAckQueueRejectException {
  return new RedisAckQueueRejectException(errors.flatMap((error) => Object.values(error.constraints ?? {})).join('; '));
}

/**
 * The handlers of the billing microservice, on the sample's Redis. An event is acked when its
 * handler returns; a throw is retried with backoff, then dead-lettered. A request gets one reply.
 */
@UsePipes(new ValidationPipe({ transform: true, exceptionFactory: refuse }))
@Controller()
export class BillingController {
  private readonly logger = new Logger(BillingController.name);

  constructor(
    private readonly ledger: BillingLedger,
    private readonly config: SampleConfig,
  ) {}

  @EventPattern<string>(BILLING_PATTERNS.orderPlaced, { maxAttempts: 5 })
  billOrder(@Payload() order: OrderPlaced, @Ctx() context: RedisAckQueueContext): void {
    const { bill, recorded } = this.ledger.record(order, quoteOf(order.amount, this.config.taxRate));
    if (recorded) this.logger.log(`Billed ${bill.orderId}: ${bill.total} (attempt ${context.attempt})`);
  }

  @MessagePattern(BILLING_PATTERNS.quote)
  quote(@Payload() { amount }: QuoteRequest): Quote {
    return quoteOf(amount, this.config.taxRate);
  }

  /** The order's bill, or null while its `order.placed` event has not been handled. */
  @MessagePattern(BILLING_PATTERNS.bill)
  bill(@Payload() { orderId }: BillRequest): Bill | null {
    return this.ledger.find(orderId) ?? null;
  }
}
