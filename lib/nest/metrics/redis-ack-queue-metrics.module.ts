import { Module, type DynamicModule, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type * as PromClient from 'prom-client';
import type { RedisAckQueueMetricsOptions } from '../../metrics/metrics-options.interface';
import { RedisAckQueueMetrics } from '../../metrics/queue-metrics';
import { requirePeer } from '../../observability/optional-peer';
import { RedisAckQueueService } from '../../service/redis-ack-queue.service';
import { metricsController, MetricsHolder } from './metrics-controller.factory';

/** Options of {@link RedisAckQueueMetricsModule.forRoot}. */
export interface RedisAckQueueMetricsModuleOptions extends RedisAckQueueMetricsOptions {
  /**
   * Serve the registry's metrics at GET `path` of the Nest app (for apps with no exporter yet). An
   * app-wide guard (`APP_GUARD`) guards it too: let it through with `isRedisAckQueueRoute(context, 'metrics')`.
   * @defaultValue none: nothing is served, scrape the registry yourself
   */
  path?: string;
}

const OPTIONS = Symbol('RedisAckQueueMetricsModuleOptions');

/**
 * Prometheus metrics of the app's `RedisAckQueueService` (needs `prom-client`, an optional
 * peer). Import it next to `RedisAckQueueModule`, which need not be global: the service is
 * found once every provider exists (at module init).
 * @example
 * ```ts
 * imports: [RedisAckQueueModule.forRoot({}), RedisAckQueueMetricsModule.forRoot({ path: '/metrics' })]
 * ```
 */
@Module({})
export class RedisAckQueueMetricsModule implements OnModuleInit, OnModuleDestroy {
  /** @internal */
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly holder: MetricsHolder,
  ) {}

  /**
   * The module, with a GET `path` controller when `path` is given.
   * @param options - The metrics options, plus `path`.
   * @throws {Error} when `path` is given and `prom-client` is not installed.
   */
  static forRoot(options: RedisAckQueueMetricsModuleOptions = {}): DynamicModule {
    let controllers: DynamicModule['controllers'] = [];
    if (options.path !== undefined) {
      const { register } = requirePeer<typeof PromClient>('prom-client', 'RedisAckQueueMetricsModule');
      controllers = [metricsController(options.path, (options.registry ?? register).contentType)];
    }
    return {
      module: RedisAckQueueMetricsModule,
      providers: [MetricsHolder, { provide: OPTIONS, useValue: options }],
      controllers,
      exports: [MetricsHolder],
    };
  }

  /** Creates the metrics over the app's `RedisAckQueueService`. */
  onModuleInit(): void {
    const { path: _path, ...options } = this.moduleRef.get<RedisAckQueueMetricsModuleOptions>(OPTIONS);
    const service = this.moduleRef.get(RedisAckQueueService, { strict: false });
    this.holder.metrics = new RedisAckQueueMetrics(service, options);
  }

  /** Closes the metrics: unsubscribes and removes them from the registry. */
  onModuleDestroy(): void {
    this.holder.metrics?.close();
  }
}
