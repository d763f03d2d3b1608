import { Controller, Get, Header, Inject, Module, type OnModuleDestroy } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { RedisAckQueueHealthIndicator, RedisAckQueueMetrics, RedisAckQueueService } from 'nestjs-redis-ack-queue';
import { Registry } from 'prom-client';
import { TOPICS } from '../orders/topics';

/** GET /health: Redis reachable, no stalled consumer, and order confirmations not lagging over a minute. */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queueHealth: RedisAckQueueHealthIndicator,
  ) {}

  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.queueHealth.isHealthy('queue', { maxLagMs: { [TOPICS.created]: 60_000 } })]);
  }
}

/**
 * GET /metrics: the queue's Prometheus metrics, gauges of every order topic included. The
 * sample keeps a registry per app, so that two apps in one process (the e2e tests start two)
 * never register a metric twice; an app of its own would rather import
 * `RedisAckQueueMetricsModule.forRoot({ path: '/metrics' })` (prom-client's default registry).
 */
@Controller()
export class MetricsController implements OnModuleDestroy {
  constructor(@Inject(RedisAckQueueMetrics) private readonly metrics: RedisAckQueueMetrics) {}

  @Get('metrics')
  @Header('content-type', Registry.PROMETHEUS_CONTENT_TYPE)
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }

  onModuleDestroy(): void {
    this.metrics.close();
  }
}

/** What an operator scrapes: metrics at GET /metrics and terminus' health check at GET /health. */
@Module({
  imports: [TerminusModule],
  controllers: [HealthController, MetricsController],
  providers: [
    RedisAckQueueHealthIndicator,
    {
      provide: RedisAckQueueMetrics,
      inject: [RedisAckQueueService],
      useFactory: (queue: RedisAckQueueService) =>
        new RedisAckQueueMetrics(queue, { registry: new Registry(), topics: Object.values(TOPICS) }),
    },
  ],
})
export class OpsModule {}
