import { type DynamicModule, Module } from '@nestjs/common';
import {
  asyncOptionsProviders,
  type RedisAckQueueAsyncOptions,
  type RedisAckQueueRootOptions,
} from './redis-ack-queue.module-definition';
import { registrationModule } from './queue-registration';
import { getQueueOptionsToken } from './queue-tokens';

/**
 * `RedisAckQueueModule.forRoot(options)` or `.forRootAsync({ imports, inject, useFactory })`
 * registers a queue: it provides its `RedisAckQueueService` (to every module unless
 * `isGlobal: false`) and runs its `@QueueHandler`s. Register named queues with `name`; two
 * registrations of one name fail startup. Startup fails within `connectTimeoutMs` when Redis
 * cannot be reached.
 */
@Module({})
export class RedisAckQueueModule {
  static forRoot(options: RedisAckQueueRootOptions = {}): DynamicModule {
    const { name, isGlobal, ...moduleOptions } = options;
    return registrationModule(RedisAckQueueModule, name, isGlobal, [
      { provide: getQueueOptionsToken(name), useValue: moduleOptions },
    ]);
  }

  static forRootAsync(options: RedisAckQueueAsyncOptions): DynamicModule {
    const { name, isGlobal, imports } = options;
    return registrationModule(
      RedisAckQueueModule,
      name,
      isGlobal,
      asyncOptionsProviders(getQueueOptionsToken(name), options),
      imports,
    );
  }
}
