import { Global, Module } from '@nestjs/common';
import { SampleConfig } from './sample.config';

@Global()
@Module({ providers: [SampleConfig], exports: [SampleConfig] })
export class SampleConfigModule {}
