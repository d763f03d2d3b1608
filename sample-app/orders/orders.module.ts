import { Module } from '@nestjs/common';
import { OrderHandlers } from './order-handlers';
import { OrdersController } from './orders.controller';
import { OrdersStore } from './orders.store';

@Module({
  controllers: [OrdersController],
  providers: [OrdersStore, OrderHandlers],
})
export class OrdersModule {}
