import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Query,
  ServiceUnavailableException,
  UnprocessableEntityException,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { RedisAckQueueService } from 'nestjs-redis-ack-queue';
import { PlacedOrderHandlers } from './placed-order-handlers';
import { PlacedOrder } from './placed-order.entity';
import { ORDER_COMMITTED } from './placed-order-topics';
import { SampleDatabase } from './sample-database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An error thrown inside the transaction after the push, on purpose (?fail=1). */
class OrderRefusedError extends Error {}

/**
 * The transactional outbox: an order and its `order.committed` message are written in ONE database
 * transaction. Both commit or neither does: a message for an order that was rolled back is never
 * delivered, and a committed order's message is never lost (the relay pushes it once committed).
 */
@Controller('placed-orders')
export class PlacedOrdersController {
  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly database: SampleDatabase,
    private readonly handlers: PlacedOrderHandlers,
  ) {}

  /** Places an order; `?fail=1` throws inside the transaction after the push: nothing is kept, nothing sent. */
  @Post()
  @HttpCode(201)
  async place(@Body() body: { item?: unknown; amount?: unknown }, @Query('fail') fail?: string): Promise<PlacedOrder> {
    const dataSource = this.dataSource();
    const { item, amount } = body ?? {};
    if (typeof item !== 'string' || typeof amount !== 'number' || !(amount > 0)) {
      throw new BadRequestException('Send { "item": string, "amount": positive number }');
    }
    const id = randomUUID();
    try {
      return await dataSource.transaction(async (manager) => {
        const order = await manager.save(manager.create(PlacedOrder, { id, item, amount, status: 'placed' }));
        // Through the same transaction: the row commits or rolls back with the order.
        await this.queue.pushInTransaction(manager, ORDER_COMMITTED, { orderId: id }, { id });
        if (fail === '1') throw new OrderRefusedError(`Order ${id} refused after its push (?fail=1)`);
        return order;
      });
    } catch (error) {
      if (error instanceof OrderRefusedError) throw new UnprocessableEntityException(error.message);
      throw error;
    }
  }

  /** The order as stored, and how many times its `order.committed` message was handled. */
  @Get(':id')
  async get(@Param('id') id: string): Promise<PlacedOrder & { deliveries: number }> {
    const dataSource = this.dataSource();
    const order = UUID.test(id) ? await dataSource.getRepository(PlacedOrder).findOneBy({ id }) : null;
    if (!order) throw new NotFoundException(`No order ${id}`);
    return { ...order, deliveries: this.handlers.deliveries(id) };
  }

  /** How many times `order.committed` was handled for `id` (the order may not exist: a rolled-back one). */
  @Get(':id/deliveries')
  deliveries(@Param('id') id: string): { deliveries: number } {
    return { deliveries: this.handlers.deliveries(id) };
  }

  private dataSource() {
    const { dataSource } = this.database;
    if (!dataSource) throw new ServiceUnavailableException('The outbox demo is off: no PostgreSQL (see the log)');
    return dataSource;
  }
}
