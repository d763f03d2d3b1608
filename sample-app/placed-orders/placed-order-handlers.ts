import { Injectable, Logger, UsePipes, ValidationPipe } from '@nestjs/common';
import { QueueHandler } from 'nestjs-redis-ack-queue';
import { PlacedOrder } from './placed-order.entity';
import { OrderCommittedMessage, ORDER_COMMITTED } from './placed-order-topics';
import { SampleDatabase } from './sample-database';

/** The consumer of `order.committed`: confirms the order, and counts each delivery (to show there is one). */
@UsePipes(new ValidationPipe({ transform: true }))
@Injectable()
export class PlacedOrderHandlers {
  private readonly logger = new Logger(PlacedOrderHandlers.name);
  private readonly counts = new Map<string, number>();

  constructor(private readonly database: SampleDatabase) {}

  @QueueHandler(ORDER_COMMITTED)
  async confirm({ orderId }: OrderCommittedMessage): Promise<void> {
    this.counts.set(orderId, this.deliveries(orderId) + 1);
    await this.database.dataSource?.getRepository(PlacedOrder).update({ id: orderId }, { status: 'confirmed' });
    this.logger.log(`Order ${orderId} confirmed (its order.committed message, relayed from the outbox)`);
  }

  /** How many times `order.committed` of `orderId` was handled by this process. */
  deliveries(orderId: string): number {
    return this.counts.get(orderId) ?? 0;
  }
}
