import { type DynamicModule, Module } from '@nestjs/common';
import {
  asyncOptionsProviders,
  type RedisAckQueueAsyncOptions,
  type RedisAckQueueRootOptions,
} from './redis-ack-queue.module-definition';
import { lazyModuleHook } from './lazy-module.hook';
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
  /**
   * Registers a queue with options known up front.
   * @param options - The module options, plus `name` and `isGlobal`.
   */
  static forRoot(options: RedisAckQueueRootOptions = {}): DynamicModule {
    const { name, isGlobal, ...moduleOptions } = options;
    return registrationModule(RedisAckQueueModule, name, isGlobal, [
      { provide: getQueueOptionsToken(name), useValue: moduleOptions },
    ]);
  }

  /**
   * Registers a queue whose options come from a factory, a class or an existing provider.
   * @param options - One of `useFactory`, `useClass` or `useExisting`, plus `name` and `isGlobal`.
   * @throws {InvalidOptionError} when none of the three is given.
   */
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

  /**
   * Import in every module loaded with `LazyModuleLoader.load()` that has `@QueueHandler`s or
   * `@OnQueueEvent`s: Nest runs no lifecycle hook there, so this import is what starts them
   * when the module loads. `load()` resolves with its handlers consuming, and rejects when one
   * is invalid. Call it in each such module (every call is a module of its own); in an eagerly
   * loaded module it does nothing, as the app's bootstrap finds its handlers.
   */
  static forLazyModule(): DynamicModule {
    return { module: RedisAckQueueModule, providers: [lazyModuleHook] };
  }

  /**
   * The former name of {@link RedisAckQueueModule.forLazyModule}, which it calls.
   * @deprecated Use {@link RedisAckQueueModule.forLazyModule} (same behaviour): in Nest, `forFeature`
   * registers a feature's resources, while this starts a lazily loaded module's handlers. Removed
   * in the next release.
   */
  static forFeature(): DynamicModule {
    return RedisAckQueueModule.forLazyModule();
  }
}
