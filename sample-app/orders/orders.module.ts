import { Module } from '@nestjs/common';
import { BillingClientModule } from '../billing/billing-client.module';
import { Carrier } from './carrier';
import { OrderHandlers } from './order-handlers';
import { OrdersController } from './orders.controller';
import { OrdersStore } from './orders.store';
import { ShipmentHandlers } from './shipment-handlers';
import { ShipmentsController } from './shipments.controller';
import { NightlyReport } from '../reports/nightly-report';

@Module({
  imports: [BillingClientModule],
  controllers: [OrdersController, ShipmentsController],
  providers: [OrdersStore, OrderHandlers, ShipmentHandlers, Carrier, NightlyReport],
})
export class OrdersModule {}
