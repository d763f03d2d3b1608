import { Module } from '@nestjs/common';
import { PlacedOrderHandlers } from './placed-order-handlers';
import { PlacedOrdersController } from './placed-orders.controller';
import { SampleDatabaseModule } from './sample-database';

/** The transactional outbox demo: orders in PostgreSQL, their messages written in the same transaction. */
@Module({
  imports: [SampleDatabaseModule],
  controllers: [PlacedOrdersController],
  providers: [PlacedOrderHandlers],
})
export class PlacedOrdersModule {}
