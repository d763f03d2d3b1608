import type { OnModuleDestroy, OnModuleInit, Provider } from '@nestjs/common';
import { DiscoveryService, ModulesContainer } from '@nestjs/core';
import type { Subscription } from 'rxjs';
import type { RedisAckQueueModuleOptions, RedisAckQueueOptions } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { getQueueOptionsToken } from './queue-tokens';
import {
  REDIS_ACK_QUEUE_TEST_OVERRIDES,
  type RedisAckQueueTestOverrides,
  withTestOverrides,
} from './queue-test-overrides';

/** The method by which a transport server or client of this package takes the app's queue settings. */
export const ADOPT_QUEUE_SETTINGS = Symbol.for('nestjs-redis-ack-queue:adopt-queue-settings');

/** The app's settings a transport takes: its options made from its own, and who watches its service. */
export interface AdoptedQueueSettings {
  /**
   * The transport's options with the app's prefix (where it set none) and a test's overrides: `own`
   * itself when neither changes anything.
   */
  options<O extends RedisAckQueueOptions>(own: O): O;
  /** Called with the service it builds (a test records its pushes). */
  onService?: (service: RedisAckQueueService) => void;
}

/** A transport server or client of this package (`nestjs-redis-ack-queue/microservices`). */
export interface QueueSettingsAdopter {
  /** Takes the settings, unless it already connected (it then keeps its own). */
  [ADOPT_QUEUE_SETTINGS](settings: AdoptedQueueSettings): void;
}

function isAdopter(target: unknown): target is QueueSettingsAdopter {
  return typeof (target as Partial<QueueSettingsAdopter> | null)?.[ADOPT_QUEUE_SETTINGS] === 'function';
}

/**
 * Hands the default queue's prefix and a test's overrides to this package's transport servers
 * (`createMicroservice` / `connectMicroservice` strategies, found through Nest's RPC target
 * registry as soon as they are added) and clients (`ClientsModule` providers, at module init):
 * a transport without a `prefix` of its own uses the module's, so its topics are the app's
 * (dashboard, metrics, CLI), and `overrideQueueForTesting` moves them with the app's queues.
 */
class TransportSettingsBinder implements OnModuleInit, OnModuleDestroy {
  private readonly settings: AdoptedQueueSettings;
  private readonly targets: Subscription | undefined;

  constructor(
    moduleOptions: RedisAckQueueModuleOptions,
    overrides: RedisAckQueueTestOverrides | null,
    modules: ModulesContainer,
    private readonly discovery: DiscoveryService,
  ) {
    this.settings = {
      options: <O extends RedisAckQueueOptions>(own: O): O =>
        withTestOverrides(
          own.prefix === undefined && moduleOptions.prefix !== undefined
            ? { ...own, prefix: moduleOptions.prefix }
            : own,
          overrides,
        ),
      onService: overrides?.onService,
    };
    // Nest 11.1+ and 12: servers are announced as their app adds them, before they listen.
    this.targets = modules.getRpcTargetRegistry?.().subscribe((target) => this.adopt(target));
  }

  onModuleInit(): void {
    for (const { instance } of this.discovery.getProviders()) this.adopt(instance);
  }

  onModuleDestroy(): void {
    this.targets?.unsubscribe();
  }

  private adopt(target: unknown): void {
    if (isAdopter(target)) target[ADOPT_QUEUE_SETTINGS](this.settings);
  }
}

/** The binder's provider, for the default queue's registration module. */
export function transportSettingsProvider(name: string): Provider {
  return {
    provide: TransportSettingsBinder,
    useFactory: (
      options: RedisAckQueueModuleOptions,
      overrides: RedisAckQueueTestOverrides | null,
      modules: ModulesContainer,
      discovery: DiscoveryService,
    ) => new TransportSettingsBinder(options, overrides, modules, discovery),
    inject: [getQueueOptionsToken(name), REDIS_ACK_QUEUE_TEST_OVERRIDES, ModulesContainer, DiscoveryService],
  };
}
