import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisAckQueueModuleOptions } from '../interfaces';

export const {
  ConfigurableModuleClass: RedisAckQueueConfigurableModule,
  /**
   * Injection token of the module's options: the {@link RedisAckQueueModuleOptions} given to
   * `forRoot` or made by `forRootAsync` (without `isGlobal`).
   */
  MODULE_OPTIONS_TOKEN: REDIS_ACK_QUEUE_OPTIONS,
  /**
   * For its type only (`typeof REDIS_ACK_QUEUE_OPTIONS_TYPE`: what `forRoot` takes, the
   * module options plus `isGlobal`, which registers the module globally; default false). At
   * runtime a placeholder that throws when a property is read.
   */
  OPTIONS_TYPE: REDIS_ACK_QUEUE_OPTIONS_TYPE,
  /**
   * For its type only (`typeof REDIS_ACK_QUEUE_ASYNC_OPTIONS_TYPE`: what `forRootAsync`
   * takes, `useFactory` and the like plus `isGlobal`, which registers the module globally;
   * default false). At runtime a placeholder that throws when a property is read.
   */
  ASYNC_OPTIONS_TYPE: REDIS_ACK_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RedisAckQueueModuleOptions>({ moduleName: 'RedisAckQueue' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
