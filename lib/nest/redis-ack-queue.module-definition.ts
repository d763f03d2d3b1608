import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisAckQueueModuleOptions } from '../interfaces';

export const {
  ConfigurableModuleClass: RedisAckQueueConfigurableModule,
  MODULE_OPTIONS_TOKEN: REDIS_ACK_QUEUE_OPTIONS,
  OPTIONS_TYPE: REDIS_ACK_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: REDIS_ACK_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RedisAckQueueModuleOptions>({ moduleName: 'RedisAckQueue' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
