import { IsNotEmpty, IsNumber, IsOptional, IsPositive, IsString } from 'class-validator';

/**
 * The patterns of the billing microservice: each is a topic of the sample's Redis, which the
 * microservice consumes and the app's client pushes to.
 */
export const BILLING_PATTERNS = {
  /** Event: an order was placed; billing records its bill. */
  orderPlaced: 'order.placed',
  /** Request: what an amount costs, tax included. */
  quote: 'billing.quote',
  /** Request: the bill recorded for an order, or null. */
  bill: 'billing.bill',
} as const;

/** The injection token of the app's client of the billing microservice. */
export const BILLING_CLIENT = 'BILLING_CLIENT';

/**
 * The payloads are classes, so that the microservice's ValidationPipe can check them: one that
 * does not fit is refused (an event goes to the dead letters at once, a request gets an error).
 */
export class OrderPlaced {
  @IsString()
  @IsNotEmpty()
  orderId!: string;

  @IsNumber()
  @IsPositive()
  amount!: number;

  @IsOptional()
  @IsString()
  customer?: string;
}

/** The payload of a `billing.quote` request. */
export class QuoteRequest {
  @IsNumber()
  @IsPositive()
  amount!: number;
}

/** The payload of a `billing.bill` request. */
export class BillRequest {
  @IsString()
  @IsNotEmpty()
  orderId!: string;
}

/** The reply to a `billing.quote` request. */
export interface Quote {
  amount: number;
  /** The tax rate of the billing microservice (0.2: 20 %). */
  taxRate: number;
  tax: number;
  total: number;
}

/** A bill of the billing microservice's ledger: the reply to a `billing.bill` request. */
export interface Bill extends Quote {
  orderId: string;
  customer?: string;
}
