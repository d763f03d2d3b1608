import { Logger } from '@nestjs/common';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { isFoundHandler } from './found-handlers';

/** Marks a prototype that has the hook, so that several handler methods install it once. */
const INSTALLED = Symbol('redis-ack-queue:missing-module-hook');
/** Classes warned about: once per class, however many instances or apps. */
const warned = new WeakSet<object>();
const logger = new Logger('RedisAckQueue');

type Hook = (this: object, ...args: unknown[]) => unknown;

/**
 * Gives a class with `@QueueHandler` methods an `onApplicationBootstrap` that warns, once per
 * class, when no registration's explorer found its instance: the app imports no
 * `RedisAckQueueModule.forRoot()`, so its handlers would silently consume nothing. Explorers
 * mark what they find in `onModuleInit`, and Nest runs every `onModuleInit` of an app before
 * any `onApplicationBootstrap`. A warning, not a failure: a unit test may build the class
 * alone. The class's own hook (or an inherited one) still runs, with its `this`, arguments and
 * result. Request-scoped providers get no lifecycle hooks from Nest, so no warning either.
 */
export function installMissingModuleHook(prototype: object): void {
  if (Object.prototype.hasOwnProperty.call(prototype, INSTALLED)) return;
  const holder = prototype as { onApplicationBootstrap?: unknown };
  const own = Object.prototype.hasOwnProperty.call(prototype, 'onApplicationBootstrap')
    ? holder.onApplicationBootstrap
    : undefined;
  function onApplicationBootstrap(this: object, ...args: unknown[]): unknown {
    warnUnlessFound(this);
    // Without one of its own, the class's parent's (looked up now: a parent decorated later counts).
    const next =
      own ?? (Object.getPrototypeOf(prototype) as { onApplicationBootstrap?: unknown } | null)?.onApplicationBootstrap;
    return typeof next === 'function' ? (next as Hook).apply(this, args) : undefined;
  }
  Object.defineProperty(prototype, 'onApplicationBootstrap', {
    value: onApplicationBootstrap,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  Object.defineProperty(prototype, INSTALLED, { value: true });
}

function warnUnlessFound(instance: object): void {
  const type = instance.constructor;
  if (isFoundHandler(instance) || warned.has(type)) return;
  warned.add(type);
  logger.warn(MESSAGES.handlersWithoutModule(type.name || 'an anonymous class'));
}
