import { IsNotEmpty, IsString } from 'class-validator';
import { defineTopic } from 'nestjs-redis-ack-queue';

/** The payload of `order.committed`: written in the order's own transaction, relayed once it commits. */
export class OrderCommittedMessage {
  @IsString()
  @IsNotEmpty()
  orderId!: string;
}

/** The outbox demo's topic (`order.placed` is the billing microservice's event already, on the same prefix). */
export const ORDER_COMMITTED = defineTopic<OrderCommittedMessage>('order.committed');
