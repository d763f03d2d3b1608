import type { FactoryProvider, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { InvalidOptionError } from '../errors';
import type { RedisAckQueueModuleOptions } from '../interfaces';

/** What a registration is: which queue, and whether every module sees it. */
export interface RedisAckQueueRegistrationOptions {
  /**
   * A named queue: an independent service (its own connection, prefix, options), injected
   * with `@InjectQueue(name)` and consumed with `@QueueHandler(topic, { queue: name })`.
   * Default: the default queue, injected as `RedisAckQueueService`.
   */
  name?: string;
  /** Default true: any module injects the service without importing anything. */
  isGlobal?: boolean;
}

/** Options of `RedisAckQueueModule.forRoot()`. */
export interface RedisAckQueueRootOptions extends RedisAckQueueModuleOptions, RedisAckQueueRegistrationOptions {}

/** A class that builds the module options (`forRootAsync({ useClass })` or `{ useExisting }`). */
export interface RedisAckQueueOptionsFactory {
  /** Returns the module options (or a promise of them). */
  create(): RedisAckQueueModuleOptions | Promise<RedisAckQueueModuleOptions>;
}

/** Options of `RedisAckQueueModule.forRootAsync()`: one of useFactory, useClass or useExisting. */
export interface RedisAckQueueAsyncOptions extends RedisAckQueueRegistrationOptions, Pick<ModuleMetadata, 'imports'> {
  /** Returns the module options; its arguments are the providers in `inject`. */
  useFactory?: (...args: never[]) => RedisAckQueueModuleOptions | Promise<RedisAckQueueModuleOptions>;
  /** The providers passed to `useFactory`, in order. */
  inject?: FactoryProvider['inject'];
  /** A class, instantiated in the registration's module, whose `create()` gives the options. */
  useClass?: Type<RedisAckQueueOptionsFactory>;
  /** A provider already available to the module (not instantiated again) whose `create()` gives the options. */
  useExisting?: Type<RedisAckQueueOptionsFactory>;
  /** Providers that the factory's injections need, added to the registration's module. */
  extraProviders?: Provider[];
}

/** The providers that yield an async registration's options under `token`. */
export function asyncOptionsProviders(token: string, options: RedisAckQueueAsyncOptions): Provider[] {
  const { useFactory, inject = [], useClass, useExisting, extraProviders = [] } = options;
  if (useFactory) return [{ provide: token, useFactory, inject }, ...extraProviders];
  const factory = useClass ?? useExisting;
  if (!factory)
    throw new InvalidOptionError('forRootAsync', options, 'options with useFactory, useClass or useExisting');
  const provider = {
    provide: token,
    useFactory: (built: RedisAckQueueOptionsFactory) => built.create(),
    inject: [factory],
  };
  return [provider, ...(useClass ? [useClass] : []), ...extraProviders];
}
