import { Module, type DynamicModule } from '@nestjs/common';
import { scalingController } from './scaling-controller.factory';

/** Options of {@link RedisAckQueueScalingModule.forRoot}. */
export interface RedisAckQueueScalingModuleOptions {
  /**
   * Serve each topic's scaling signal at GET `<path>/<topic>` of the Nest app, as JSON (a
   * ScalingReport). An app-wide guard (`APP_GUARD`) guards it too: let it through with
   * `isRedisAckQueueRoute(context, 'scaling')`, or guard it as the cluster needs.
   * @defaultValue `'/scaling'`
   */
  path?: string;
}

/**
 * The scaling signal of the app's `RedisAckQueueService` over HTTP, in the shape KEDA's
 * `metrics-api` scaler reads (docs/scaling.md). Import it next to `RedisAckQueueModule`, which
 * need not be global: the service is found when a request comes.
 * @example
 * ```ts
 * imports: [RedisAckQueueModule.forRoot({}), RedisAckQueueScalingModule.forRoot({ path: '/scaling' })]
 * ```
 */
@Module({})
export class RedisAckQueueScalingModule {
  /**
   * The module, with its GET `<path>/:topic` controller.
   * @param options - Where to serve it.
   */
  static forRoot(options: RedisAckQueueScalingModuleOptions = {}): DynamicModule {
    return { module: RedisAckQueueScalingModule, controllers: [scalingController(options.path ?? '/scaling')] };
  }
}
