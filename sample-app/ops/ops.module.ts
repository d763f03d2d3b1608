import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { RedisAckQueueHealthIndicator, RedisAckQueueMetricsModule } from 'nestjs-redis-ack-queue';
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
 * What an operator scrapes: Prometheus metrics at GET /metrics (gauges of every order topic) and
 * terminus' health check at GET /health. A registry of its own per app, so that two apps in one
 * process (the e2e tests start two) do not register the same metric twice; most apps use
 * prom-client's default registry (leave `registry` out).
 */
@Module({
  imports: [
    TerminusModule,
    RedisAckQueueMetricsModule.forRoot({ path: '/metrics', registry: new Registry(), topics: Object.values(TOPICS) }),
  ],
  controllers: [HealthController],
  providers: [RedisAckQueueHealthIndicator],
})
export class OpsModule {}
