import { IsNotEmpty, IsString } from 'class-validator';
import { defineTopic } from 'nestjs-redis-ack-queue';

/**
 * The payload of every order topic. A class, so that the ValidationPipe on the handlers can
 * check it: a message that is not one goes to the dead letters at once as `rejected`.
 */
export class OrderMessage {
  @IsString()
  @IsNotEmpty()
  orderId!: string;
}

/** The payload of the customer summary topic. */
export class CustomerMessage {
  @IsString()
  @IsNotEmpty()
  customer!: string;
}

/** A shipment of several orders: the parent of a flow, run once each of its orders was picked. */
export class ShipmentMessage {
  @IsString()
  @IsNotEmpty()
  shipmentId!: string;
}

/** One order of a shipment to take off the shelf: a child of the shipment's flow. */
export class PickMessage {
  @IsString()
  @IsNotEmpty()
  shipmentId!: string;

  @IsString()
  @IsNotEmpty()
  orderId!: string;
}

/** Typed topics: pushing another payload to them, or handling them as something else, does not compile. */
export const TOPICS = {
  created: defineTopic<OrderMessage>('order.created'),
  paymentTimeout: defineTopic<OrderMessage>('order.payment-timeout'),
  invoice: defineTopic<OrderMessage>('invoice.render'),
  customerSummary: defineTopic<CustomerMessage>('customer.summary'),
  shipmentPick: defineTopic<PickMessage>('shipment.pick'),
  shipmentDispatch: defineTopic<ShipmentMessage>('shipment.dispatch'),
} as const;
