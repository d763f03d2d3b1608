import { Module } from '@nestjs/common';
import { BillingClientModule } from '../billing/billing-client.module';
import { OrderHandlers } from './order-handlers';
import { OrdersController } from './orders.controller';
import { OrdersStore } from './orders.store';
import { NightlyReport } from '../reports/nightly-report';

@Module({
  imports: [BillingClientModule],
  controllers: [OrdersController],
  providers: [OrdersStore, OrderHandlers, NightlyReport],
})
export class OrdersModule {}
