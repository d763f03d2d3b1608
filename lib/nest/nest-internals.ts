/**
 * Every part of Nest this package uses beyond the public `@nestjs/core` and `@nestjs/common`
 * entries, in one place. Handlers run like @nestjs/microservices message handlers, with
 * Nest's own enhancer consumers and context creators, and discovery reads provider wrappers:
 * neither is public API. A Nest release that moves one of these breaks this file alone, and
 * `npm run test:nest11` runs the Nest-facing suites against the previous major.
 */
export {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PARAMTYPES_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants';
export { ExternalExceptionFilterContext } from '@nestjs/core/exceptions/external-exception-filter-context';
export type { ExternalExceptionsHandler } from '@nestjs/core/exceptions/external-exceptions-handler';
export { FORBIDDEN_MESSAGE, GuardsConsumer, GuardsContextCreator } from '@nestjs/core/guards/index.js';
export { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
export { STATIC_CONTEXT } from '@nestjs/core/injector/constants';
export type { NestContainer } from '@nestjs/core/injector/container';
export type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
export { InterceptorsConsumer, InterceptorsContextCreator } from '@nestjs/core/interceptors/index.js';
export { PipesConsumer, PipesContextCreator } from '@nestjs/core/pipes/index.js';
