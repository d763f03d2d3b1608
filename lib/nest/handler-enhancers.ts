import type { CanActivate, NestInterceptor, PipeTransform } from '@nestjs/common';
import type { ApplicationConfig, ContextId, ModulesContainer } from '@nestjs/core';
import {
  EXCEPTION_FILTERS_METADATA,
  ExternalExceptionFilterContext,
  type ExternalExceptionsHandler,
  GUARDS_METADATA,
  GuardsConsumer,
  GuardsContextCreator,
  INTERCEPTORS_METADATA,
  InterceptorsConsumer,
  InterceptorsContextCreator,
  type NestContainer,
  PIPES_METADATA,
  PipesConsumer,
  PipesContextCreator,
} from './nest-internals';

/** The enhancers of one handler, resolved for one context: global first, then its class's, then its method's. */
export interface EnhancerSet {
  guards: CanActivate[];
  interceptors: NestInterceptor[];
  pipes: PipeTransform[];
  filters: ExternalExceptionsHandler;
}

type Handler = (...args: unknown[]) => unknown;

const METADATA_KEYS = [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA];

/**
 * Finds the guards, interceptors, pipes and exception filters that apply to a handler, with
 * Nest's own context creators, as @nestjs/microservices does for message handlers: bound with
 * `@UseGuards()` & co. on the method or its class, or app-wide (`APP_GUARD`... providers,
 * `app.useGlobalGuards()`...). Their consumers run them.
 */
export class HandlerEnhancers {
  readonly guardsConsumer = new GuardsConsumer();
  readonly interceptorsConsumer = new InterceptorsConsumer();
  readonly pipesConsumer = new PipesConsumer();
  private readonly guards: GuardsContextCreator;
  private readonly interceptors: InterceptorsContextCreator;
  private readonly pipes: PipesContextCreator;
  private readonly filters: ExternalExceptionFilterContext;

  constructor(
    modules: ModulesContainer,
    private readonly config: ApplicationConfig,
  ) {
    // The context creators use their container only to find enhancer instances in the
    // modules; the modules container and the app config are what an app provides publicly.
    const container = { getModules: () => modules } as unknown as NestContainer;
    this.guards = new GuardsContextCreator(container, config);
    this.interceptors = new InterceptorsContextCreator(container, config);
    this.pipes = new PipesContextCreator(container, config);
    this.filters = new ExternalExceptionFilterContext(container, config);
  }

  /** Whether any enhancer applies to `method` of `classRef`: on the method, on the class, or app-wide. */
  any(classRef: object, method: Handler): boolean {
    const { config } = this;
    const global = [
      config.getGlobalGuards(),
      config.getGlobalRequestGuards(),
      config.getGlobalInterceptors(),
      config.getGlobalRequestInterceptors(),
      config.getGlobalPipes(),
      config.getGlobalRequestPipes(),
      config.getGlobalFilters(),
      config.getGlobalRequestFilters(),
    ];
    if (global.some((list) => list.length > 0)) return true;
    return METADATA_KEYS.some((key) => [classRef, method].some((target) => hasItems(Reflect.getMetadata(key, target))));
  }

  /** The instances that apply, for the static context or for one message of a scoped handler. */
  resolve(
    instance: object,
    method: Handler,
    moduleKey: string,
    contextId?: ContextId,
    inquirerId?: string,
  ): EnhancerSet {
    return {
      guards: this.guards.create(instance, method, moduleKey, contextId, inquirerId),
      interceptors: this.interceptors.create(instance, method, moduleKey, contextId, inquirerId),
      pipes: this.pipes.create(instance, method, moduleKey, contextId, inquirerId),
      // Typed for HTTP routes there; only read for its metadata here.
      filters: this.filters.create(
        instance,
        method as Parameters<ExternalExceptionFilterContext['create']>[1],
        moduleKey,
        contextId,
        inquirerId,
      ),
    };
  }
}

function hasItems(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}
