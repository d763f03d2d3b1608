import { BadRequestException, Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { RedisAckQueueService } from 'nestjs-redis-ack-queue';
import { Carrier } from './carrier';
import { OrdersStore, type Shipment } from './orders.store';
import { TOPICS } from './topics';

/** A shipment as GET /shipments/:id shows it. */
export interface ShipmentView extends Shipment {
  /** How many labels the carrier sold for it: 1, however many times the dispatch ran. */
  labelsBought: number;
}

@Controller('shipments')
export class ShipmentsController {
  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly store: OrdersStore,
    private readonly carrier: Carrier,
  ) {}

  /**
   * Ships several orders in one parcel, as a flow: each order is picked by its own message, and the
   * dispatch runs once all were picked. The ids make a retried request finish the same flow.
   */
  @Post()
  @HttpCode(202)
  async create(@Body() body: { orderIds?: unknown }): Promise<Shipment> {
    const { orderIds } = body ?? {};
    if (!isOrderIdList(orderIds) || !orderIds.every((id) => this.store.find(id))) {
      throw new BadRequestException('Send { "orderIds": the ids of 1 to 50 different orders }');
    }
    const shipment = this.store.createShipment(orderIds);
    await this.queue.pushFlow({
      topic: TOPICS.shipmentDispatch,
      id: shipment.id,
      payload: { shipmentId: shipment.id },
      children: orderIds.map((orderId) => ({
        topic: TOPICS.shipmentPick,
        id: `${shipment.id}.${orderId}`,
        payload: { shipmentId: shipment.id, orderId },
      })),
    });
    return shipment;
  }

  @Get(':id')
  get(@Param('id') id: string): ShipmentView {
    return { ...this.store.shipment(id), labelsBought: this.carrier.labelsBought(id) };
  }
}

function isOrderIdList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.length <= 50 &&
    value.every((id) => typeof id === 'string') &&
    new Set(value).size === value.length
  );
}
