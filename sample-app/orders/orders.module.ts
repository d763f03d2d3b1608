import { Module } from '@nestjs/common';
import { OrderHandlers } from './order-handlers';
import { OrdersController } from './orders.controller';
import { OrdersStore } from './orders.store';
import { NightlyReport } from '../reports/nightly-report';

@Module({
  controllers: [OrdersController],
  providers: [OrdersStore, OrderHandlers, NightlyReport],
})
export class OrdersModule {}
