import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { QueueEventExplorer } from './queue-event.explorer';
import { QueueHandlerExplorer } from './queue-handler.explorer';
import type { RedisAckQueueModuleOptions } from '../interfaces';
import { REDIS_ACK_QUEUE_OPTIONS, RedisAckQueueConfigurableModule } from './redis-ack-queue.module-definition';
import { RedisAckQueueService } from '../queue/redis-ack-queue.service';

/**
 * `RedisAckQueueModule.forRoot(options)` or `.forRootAsync({ imports, inject, useFactory })`
 * provides `RedisAckQueueService` and runs every `@QueueHandler` of the app.
 * Startup fails within `connectTimeoutMs` when Redis cannot be reached.
 *
 * Startup fails, too, with the errors of {@link RedisAckQueueService.connect} (bad
 * credentials, Redis older than 7.0, an evicting memory policy), with
 * {@link InvalidQueueHandlerError} for a handler that cannot run, and with
 * {@link PartitionCountMismatchError} when Redis holds a handler's topic with another
 * partition count. Call `app.enableShutdownHooks()` so that SIGTERM drains the consumers.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [RedisAckQueueModule.forRoot({ connection: 'redis://127.0.0.1:6379', prefix: 'shop' })],
 *   providers: [OrderHandlers],
 * })
 * export class AppModule {}
 * ```
 * @example
 * ```ts
 * RedisAckQueueModule.forRootAsync({
 *   isGlobal: true,
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ connection: config.get('REDIS_URL') }),
 * })
 * ```
 * @prop forRoot Registers the module with the given {@link RedisAckQueueModuleOptions} (every
 * unset option takes its default), plus `isGlobal` (default false). See the examples.
 * @prop forRootAsync Registers the module with options made at startup by `useFactory` (with
 * `imports` and `inject`), or by `useClass` or `useExisting` (a class with a `create()` method),
 * plus `isGlobal` (default false).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: RedisAckQueueService,
      useFactory: async (options: RedisAckQueueModuleOptions) => {
        const { consumers: _consumers, ...serviceOptions } = options;
        const service = new RedisAckQueueService(serviceOptions);
        await service.connect();
        return service;
      },
      inject: [REDIS_ACK_QUEUE_OPTIONS],
    },
    QueueHandlerExplorer,
    QueueEventExplorer,
  ],
  exports: [RedisAckQueueService],
})
export class RedisAckQueueModule extends RedisAckQueueConfigurableModule {}
