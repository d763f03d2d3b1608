import { type ContextId, ContextIdFactory, type ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from './nest-internals';

/**
 * Whether Nest builds the provider once for the app, so its methods are bound to that
 * instance. A request-scoped or transient provider (or one that depends on such) is built per
 * message or event instead, through `bindPerRequest`.
 */
export function isBuiltOnce(wrapper: InstanceWrapper): boolean {
  return wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
}

/**
 * Binds `call` to a provider built per request, for `@QueueHandler`s and `@OnQueueEvent`s
 * alike: each call opens a new context whose `REQUEST` is `request(...args)`, resolves the
 * provider in it (with every request-scoped provider it needs) under its token, so a test's
 * replacement is what runs, and passes the instance and the context on.
 */
export function bindPerRequest<A extends unknown[]>(
  moduleRef: ModuleRef,
  wrapper: InstanceWrapper,
  request: (...args: A) => object,
  call: (instance: Record<string, unknown>, contextId: ContextId, ...args: A) => unknown,
): (...args: A) => Promise<unknown> {
  return async (...args: A) => {
    const contextId = ContextIdFactory.create();
    moduleRef.registerRequestByContextId(request(...args), contextId);
    const instance = await moduleRef.resolve<unknown, Record<string, unknown>>(wrapper.token, contextId, {
      strict: false,
    });
    return await call(instance, contextId, ...args);
  };
}
