import type { Type } from '@nestjs/common';
import { ApplicationConfig, ModulesContainer, type ModuleRef } from '@nestjs/core';
import type { MessageContext, QueueHandlerFn, QueueRequest } from '../interfaces';
import { HandlerEnhancers } from './handler-enhancers';
import { createHandlerPipeline, settled, type PipelineTarget } from './handler-pipeline';
import { type InstanceWrapper, PARAMTYPES_METADATA } from './nest-internals';
import { bindPerRequest, isBuiltOnce } from './request-scope.binder';

type Method = (payload: unknown, context: MessageContext) => unknown;

/**
 * The function a consumer calls for one @QueueHandler method. Without any guard, interceptor,
 * pipe or filter (on the method, its class, or app-wide) it is the method itself, called
 * directly: nothing is added per message. With some, the method runs through them
 * (handler-pipeline.ts). A static provider is bound once; a request-scoped (or transient,
 * or depending on one) provider is resolved per message, its enhancers with it.
 */
export function bindQueueHandler(moduleRef: ModuleRef, wrapper: InstanceWrapper, methodName: string): QueueHandlerFn {
  // The decorated class is the provider's token; a replacement (overrideProvider, useValue,
  // useFactory, useClass) is what runs, through its method of the same name.
  const metatype = (typeof wrapper.token === 'function' ? wrapper.token : wrapper.metatype) as Type;
  const method = (metatype.prototype as Record<string, Method>)[methodName] as (...args: unknown[]) => unknown;
  const replaced = wrapper.metatype !== metatype;
  const enhancers = new HandlerEnhancers(
    moduleRef.get(ModulesContainer, { strict: false }),
    moduleRef.get(ApplicationConfig, { strict: false }),
  );
  const enhanced = enhancers.any(metatype, method);
  const moduleKey = wrapper.host?.token ?? '';
  const target = (instance: object): PipelineTarget => ({
    instance,
    method: replaced ? ((instance as Record<string, Method>)[methodName] as (...args: unknown[]) => unknown) : method,
    metatype: paramType(instance, methodName),
  });
  if (isBuiltOnce(wrapper)) {
    const instance = wrapper.instance as Record<string, Method>;
    if (!enhanced) return (payload, context) => instance[methodName](payload, context);
    return createHandlerPipeline(target(instance), enhancers.resolve(instance, method, moduleKey), enhancers);
  }
  return bindPerRequest(
    moduleRef,
    wrapper,
    (_payload: unknown, context: MessageContext): QueueRequest => ({ queueMessage: context }),
    (instance, contextId, payload, context) => {
      if (!enhanced) return settled((instance[methodName] as Method)(payload, context));
      const set = enhancers.resolve(instance, method, moduleKey, contextId, wrapper.id);
      return createHandlerPipeline(target(instance), set, enhancers)(payload, context);
    },
  );
}

/** The declared type of the payload parameter (emitted by TypeScript with emitDecoratorMetadata). */
function paramType(instance: object, methodName: string): Type | undefined {
  const types = Reflect.getMetadata(PARAMTYPES_METADATA, instance, methodName) as Type[] | undefined;
  return types?.[0];
}
