import type { Type } from '@nestjs/common';
import type { MetadataScanner, Reflector } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { InvalidQueueHandlerError, RedisAckQueueError } from '../errors';
import { resolveConsumerSettings } from '../queue/settings';
import { assertQueueName, assertTopic } from '../queue/validation';
import { QUEUE_HANDLER_METADATA } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { QueueHandlerMetadata } from './queue-handler.decorator';
import { DEFAULT_QUEUE } from './queue-tokens';

/** A `@QueueHandler` method of a provider or controller. */
export interface HandlerSite {
  wrapper: InstanceWrapper;
  method: string;
  metadata: QueueHandlerMetadata;
  /** The queue it consumes from (`default` when the decorator names none). */
  queue: string;
  /** `Class.method`, for messages. */
  where: string;
}

/** Every `@QueueHandler` method of the given providers and controllers, checked: valid topic, options and queue name. */
export function findHandlerSites(
  wrappers: InstanceWrapper[],
  scanner: MetadataScanner,
  reflector: Reflector,
): HandlerSite[] {
  const sites: HandlerSite[] = [];
  for (const wrapper of wrappers) {
    // An alias (useExisting) is the provider it points to, which is found by itself.
    if (wrapper.isAlias) continue;
    const found = new Set<string>();
    for (const type of classesOf(wrapper)) {
      const prototype = type.prototype as Record<string, unknown>;
      for (const method of scanner.getAllMethodNames(prototype)) {
        const target = prototype[method];
        const metadata = reflector.get<QueueHandlerMetadata | undefined>(
          QUEUE_HANDLER_METADATA,
          target as () => unknown,
        );
        if (!metadata || found.has(method)) continue;
        found.add(method);
        const where = `${type.name}.${method}`;
        check(metadata, where);
        sites.push({ wrapper, method, metadata, queue: metadata.queue ?? DEFAULT_QUEUE, where });
      }
    }
  }
  return sites;
}

/**
 * Where a provider's handlers are declared: the class that builds it, then the class it is
 * registered under (its token). A provider replaced by a value, a factory or another class
 * (a test's `overrideProvider(X).useValue(mock)`) keeps the handlers of X, consumed through
 * the replacement's methods of the same names.
 */
function classesOf(wrapper: InstanceWrapper): Type[] {
  const classes: Type[] = [];
  if (!wrapper.inject && isClass(wrapper.metatype)) classes.push(wrapper.metatype);
  if (isClass(wrapper.token) && wrapper.token !== wrapper.metatype) classes.push(wrapper.token);
  return classes;
}

function isClass(value: unknown): value is Type {
  return typeof value === 'function' && typeof (value as { prototype?: unknown }).prototype === 'object';
}

/** A provider built once (not per message) must have the handler's method: a replacement may lack it. */
export function assertCallable({ wrapper, method, where }: HandlerSite): void {
  if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) return;
  const instance = wrapper.instance as Record<string, unknown> | null | undefined;
  if (typeof instance?.[method] !== 'function') throw InvalidQueueHandlerError.replacedWithoutMethod(where, method);
}

function check(metadata: QueueHandlerMetadata, where: string): void {
  try {
    assertTopic(metadata.topic);
    if (metadata.queue !== undefined) assertQueueName(metadata.queue);
    resolveConsumerSettings(metadata.options, undefined);
  } catch (error) {
    if (!(error instanceof RedisAckQueueError)) throw error;
    throw new InvalidQueueHandlerError(where, MESSAGES.invalidHandler(where, error.message), { cause: error });
  }
}
