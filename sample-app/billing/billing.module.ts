import { Module } from '@nestjs/common';
import { SampleConfigModule } from '../sample-config.module';
import { BillingController } from './billing.controller';
import { BillingLedger } from './billing.ledger';

/** The billing microservice's module (see main.ts): its handlers and its ledger. */
@Module({
  imports: [SampleConfigModule],
  controllers: [BillingController],
  providers: [BillingLedger],
})
export class BillingModule {}
