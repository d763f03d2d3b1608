import type { DynamicModule, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { RedisAckQueueModuleOptions } from '../interfaces';
import { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { assertQueueName } from '../queue/validation';
import { upsertSchedules } from './schedules-option';
import { transportSettingsProvider } from './transport-settings.binder';
import { QueueEventExplorer } from './queue-event.explorer';
import { QueueHandlerExplorer } from './queue-handler.explorer';
import type { QueueRegistration } from './queue-registrations';
import { DEFAULT_QUEUE, QUEUE_REGISTRATION, getQueueOptionsToken, getQueueToken } from './queue-tokens';
import {
  REDIS_ACK_QUEUE_TEST_OVERRIDES,
  type RedisAckQueueTestOverrides,
  withTestOverrides,
} from './queue-test-overrides';

/**
 * Builds and connects a queue's service (with a test's overrides, when a test set them): startup
 * fails within connectTimeoutMs when Redis cannot be reached.
 */
async function connectService(
  options: RedisAckQueueModuleOptions,
  overrides: RedisAckQueueTestOverrides | null,
  name: string,
): Promise<RedisAckQueueService> {
  const { consumers: _consumers, schedules, ...serviceOptions } = withTestOverrides(options, overrides);
  const service = new RedisAckQueueService(serviceOptions, name === DEFAULT_QUEUE ? undefined : name);
  overrides?.onService?.(service);
  await service.connect();
  await upsertSchedules(service, schedules);
  return service;
}

/**
 * The module of one registration: its options (from `optionsProviders`, under the queue's
 * options token), its service (exported under the queue's token), an explorer that runs
 * the handlers of this queue, and the testing override (null unless a test replaces it).
 */
export function registrationModule(
  module: Type,
  name: string = DEFAULT_QUEUE,
  isGlobal = true,
  optionsProviders: Provider[],
  imports: ModuleMetadata['imports'] = [],
): DynamicModule {
  assertQueueName(name);
  const optionsToken = getQueueOptionsToken(name);
  const serviceToken = getQueueToken(name);
  const registration: Provider = {
    provide: QUEUE_REGISTRATION,
    useFactory: (
      options: RedisAckQueueModuleOptions,
      service: RedisAckQueueService,
      overrides: RedisAckQueueTestOverrides | null,
    ): QueueRegistration => ({ name, options, service, overrides }),
    inject: [optionsToken, serviceToken, REDIS_ACK_QUEUE_TEST_OVERRIDES],
  };
  return {
    module,
    global: isGlobal,
    imports: [DiscoveryModule, ...imports],
    providers: [
      ...optionsProviders,
      { provide: REDIS_ACK_QUEUE_TEST_OVERRIDES, useValue: null },
      {
        provide: serviceToken,
        useFactory: (options: RedisAckQueueModuleOptions, overrides: RedisAckQueueTestOverrides | null) =>
          connectService(options, overrides, name),
        inject: [optionsToken, REDIS_ACK_QUEUE_TEST_OVERRIDES],
      },
      registration,
      QueueHandlerExplorer,
      QueueEventExplorer,
      // The app's transports follow its default queue.
      ...(name === DEFAULT_QUEUE ? [transportSettingsProvider(name)] : []),
    ],
    exports: [serviceToken],
  };
}
