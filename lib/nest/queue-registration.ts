import type { DynamicModule, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { RedisAckQueueModuleOptions } from '../interfaces';
import { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { assertQueueName } from '../queue/validation';
import { upsertSchedules } from './schedules-option';
import { QueueEventExplorer } from './queue-event.explorer';
import { QueueHandlerExplorer } from './queue-handler.explorer';
import type { QueueRegistration } from './queue-registrations';
import { DEFAULT_QUEUE, QUEUE_REGISTRATION, getQueueOptionsToken, getQueueToken } from './queue-tokens';

/** Builds and connects a queue's service: startup fails within connectTimeoutMs when Redis cannot be reached. */
async function connectService(options: RedisAckQueueModuleOptions, name: string): Promise<RedisAckQueueService> {
  const { consumers: _consumers, schedules, ...serviceOptions } = options;
  const service = new RedisAckQueueService(serviceOptions, name === DEFAULT_QUEUE ? undefined : name);
  await service.connect();
  await upsertSchedules(service, schedules);
  return service;
}

/**
 * The module of one registration: its options (from `optionsProviders`, under the queue's
 * options token), its service (exported under the queue's token) and an explorer that runs
 * the handlers of this queue.
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
    useFactory: (options: RedisAckQueueModuleOptions, service: RedisAckQueueService): QueueRegistration => ({
      name,
      options,
      service,
    }),
    inject: [optionsToken, serviceToken],
  };
  return {
    module,
    global: isGlobal,
    imports: [DiscoveryModule, ...imports],
    providers: [
      ...optionsProviders,
      {
        provide: serviceToken,
        useFactory: (options: RedisAckQueueModuleOptions) => connectService(options, name),
        inject: [optionsToken],
      },
      registration,
      QueueHandlerExplorer,
      QueueEventExplorer,
    ],
    exports: [serviceToken],
  };
}
