import { IsNotEmpty, IsString } from 'class-validator';
import { defineTopic } from 'nestjs-redis-ack-queue';

/** The payload of `order.placed`: written in the order's own transaction, relayed once it commits. */
export class OrderPlacedMessage {
  @IsString()
  @IsNotEmpty()
  orderId!: string;
}

/** The outbox demo's topic. */
export const ORDER_PLACED = defineTopic<OrderPlacedMessage>('order.placed');
