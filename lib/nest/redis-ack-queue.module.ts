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
