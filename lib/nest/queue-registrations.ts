import type { InjectionToken } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';
import { STATIC_CONTEXT } from './nest-internals';
import { DuplicateQueueRegistrationError } from '../errors';
import type { RedisAckQueueModuleOptions } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { DEFAULT_QUEUE, QUEUE_REGISTRATION } from './queue-tokens';
import type { RedisAckQueueTestOverrides } from './queue-test-overrides';

/** One `forRoot` / `forRootAsync` registration, as its module provides it. */
export interface QueueRegistration {
  readonly name: string;
  readonly options: RedisAckQueueModuleOptions;
  readonly service: RedisAckQueueService;
  /** A test's overrides (overrideQueueForTesting), applied to all registrations alike; absent or null in an app. */
  readonly overrides?: RedisAckQueueTestOverrides | null;
}

/** The built instances every module of the app holds under `token` (module-private providers included). */
export function instancesIn<T>(modules: ModulesContainer, token: InjectionToken): T[] {
  const instances: T[] = [];
  for (const module of modules.values()) {
    // A module still being built (loaded lazily) holds a bare prototype until its instance exists.
    const host = module.providers.get(token)?.getInstanceByContextId(STATIC_CONTEXT);
    if (host?.isResolved && host.instance) instances.push(host.instance as T);
  }
  return instances;
}

/** Every queue registered in the app. */
export function registrationsIn(modules: ModulesContainer): QueueRegistration[] {
  return instancesIn<QueueRegistration>(modules, QUEUE_REGISTRATION);
}

/** Refuses two registrations of one name: the second would silently shadow the first. */
export function assertOneRegistrationPerName(registrations: readonly QueueRegistration[]): void {
  const seen = new Set<string>();
  for (const { name } of registrations) {
    if (seen.has(name)) throw new DuplicateQueueRegistrationError(name, name === DEFAULT_QUEUE);
    seen.add(name);
  }
}
