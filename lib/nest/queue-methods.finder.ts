import type { Type } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { QUEUE_EVENT_METADATA, QUEUE_HANDLER_METADATA } from '../common/redis-ack-queue.constants';
import type { InstanceWrapper } from './nest-internals';
import type { OnQueueEventMetadata } from './on-queue-event.decorator';
import type { QueueHandlerMetadata } from './queue-handler.decorator';
import { DEFAULT_QUEUE } from './queue-tokens';

/** A `@QueueHandler` or `@OnQueueEvent` method of a provider or controller. */
export interface QueueMethod<M extends { queue?: string }> {
  wrapper: InstanceWrapper;
  method: string;
  metadata: M;
  /** The queue it belongs to (`default` when the decorator names none). */
  queue: string;
  /** `Class.method`, for messages. */
  where: string;
}

/** Every decorated method of the app, by decorator, in the order the modules hold them. */
export interface QueueMethods {
  handlers: QueueMethod<QueueHandlerMetadata>[];
  listeners: QueueMethod<OnQueueEventMetadata>[];
}

/**
 * Walks every provider and controller of the app (lazily loaded modules included, once they
 * are in the container) for `@QueueHandler` and `@OnQueueEvent` methods, by one set of rules:
 * an alias (useExisting) is skipped, as the provider it points to is found by itself; a
 * provider registered under its class (a factory, a value, a test's override) is read
 * through that class; request-scoped and transient ones are found like the others (their
 * binders resolve them per message or event). Not checked here: each explorer checks its own.
 */
export function findQueueMethods(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
): QueueMethods {
  const found: QueueMethods = { handlers: [], listeners: [] };
  /** The methods of `wrapper` that carry `key`, each once (a replaced class and its replacement may both carry it). */
  const collect = <M extends { queue?: string }>(wrapper: InstanceWrapper, key: string, into: QueueMethod<M>[]) => {
    const seen = new Set<string>();
    for (const type of classesOf(wrapper)) {
      const prototype = type.prototype as Record<string, unknown>;
      for (const method of scanner.getAllMethodNames(prototype)) {
        const metadata = reflector.get<M | undefined>(key, prototype[method] as () => unknown);
        if (!metadata || seen.has(method)) continue;
        seen.add(method);
        const where = `${type.name}.${method}`;
        into.push({ wrapper, method, metadata, queue: metadata.queue ?? DEFAULT_QUEUE, where });
      }
    }
  };
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    if (wrapper.isAlias) continue;
    collect(wrapper, QUEUE_HANDLER_METADATA, found.handlers);
    collect(wrapper, QUEUE_EVENT_METADATA, found.listeners);
  }
  return found;
}

/**
 * Where a provider's decorated methods are declared: the class that builds it, then the
 * class it is registered under (its token). A provider replaced by a value, a factory or
 * another class (a test's `overrideProvider(X).useValue(mock)`) keeps the methods of X,
 * called through the replacement's methods of the same names.
 */
function classesOf(wrapper: InstanceWrapper): Type[] {
  const classes: Type[] = [];
  // A factory's metatype is the factory function, not a class.
  if (!wrapper.inject && isClass(wrapper.metatype)) classes.push(wrapper.metatype);
  if (isClass(wrapper.token) && wrapper.token !== wrapper.metatype) classes.push(wrapper.token);
  return classes;
}

function isClass(value: unknown): value is Type {
  return typeof value === 'function' && typeof (value as { prototype?: unknown }).prototype === 'object';
}
