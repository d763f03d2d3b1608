import { Injectable, UsePipes, ValidationPipe } from '@nestjs/common';
import { type MessageContext, QueueHandler } from 'nestjs-redis-ack-queue';
import { Carrier } from './carrier';
import { OrdersStore, type PickedItem } from './orders.store';
// Value imports: the ValidationPipe reads the payload's class from the parameter's design type.
import { PickMessage, ShipmentMessage, TOPICS } from './topics';

/**
 * A shipment is a flow (see ShipmentsController): one `shipment.pick` child per order, and the
 * `shipment.dispatch` parent, which runs once every pick was acked, with what each returned.
 */
@UsePipes(new ValidationPipe({ transform: true }))
@Injectable()
export class ShipmentHandlers {
  constructor(
    private readonly store: OrdersStore,
    private readonly carrier: Carrier,
  ) {}

  /** Takes one order's item off the shelf; what it returns is handed to the parent. */
  @QueueHandler(TOPICS.shipmentPick, { concurrency: 5 })
  pick({ orderId }: PickMessage): PickedItem {
    return { orderId, item: this.store.get(orderId).item };
  }

  /**
   * Packs what was picked and hands it to the carrier. Each carrier call is a durable step: when the
   * pickup booking fails, the retry gets the stored label back instead of buying a second one.
   */
  @QueueHandler(TOPICS.shipmentDispatch, { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 200 } })
  async dispatch({ shipmentId }: ShipmentMessage, context: MessageContext): Promise<{ tracking: string }> {
    const picked = Object.values(context.childResults()[TOPICS.shipmentPick] ?? {}) as PickedItem[];
    const { tracking } = await context.step('label', () => this.carrier.buyLabel(shipmentId));
    const { pickupAt } = await context.step('pickup', () => this.carrier.bookPickup(shipmentId, context.attempt));
    this.store.dispatched(shipmentId, { picked, tracking, pickupAt, attempt: context.attempt });
    return { tracking };
  }
}
