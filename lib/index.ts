/**
 * The library: the Nest module, the queue service, decorators, errors and types. Test helpers
 * are in `nestjs-redis-ack-queue/testing`.
 * @module nestjs-redis-ack-queue
 */
export { RedisAckQueueModule } from './nest/redis-ack-queue.module';
export type {
  RedisAckQueueAsyncOptions,
  RedisAckQueueOptionsFactory,
  RedisAckQueueRegistrationOptions,
  RedisAckQueueRootOptions,
} from './nest/redis-ack-queue.module-definition';
export { DEFAULT_QUEUE, REDIS_ACK_QUEUE_OPTIONS, getQueueOptionsToken, getQueueToken } from './nest/queue-tokens';
export { InjectQueue } from './nest/inject-queue.decorator';
export { RedisAckQueueService } from './service/redis-ack-queue.service';
export { defineTopic } from './queue/define-topic';
export { outboxMigrationSql, DEFAULT_OUTBOX_TABLE } from './outbox/outbox-table';
export { chainCodecs, createCompressionCodec, createEncryptionCodec } from './codecs/codecs';
export {
  QueueHandler,
  type QueueBatchHandlerDecorator,
  type QueueHandlerDecorator,
  type QueueHandlerDecoratorOptions,
  type QueueHandlerMetadata,
} from './nest/queue-handler.decorator';
export { OnQueueEvent, type OnQueueEventMetadata, type OnQueueEventOptions } from './nest/on-queue-event.decorator';
export {
  REDIS_ACK_QUEUE_CONTEXT_TYPE,
  REDIS_ACK_QUEUE_ROUTE,
  type RedisAckQueueContextType,
  type RedisAckQueueRoute,
} from './common/redis-ack-queue.constants';
export { isRedisAckQueueRoute } from './nest/redis-ack-queue-route';
export * from './errors';
export * from './interfaces';
export { RedisAckQueueMetrics } from './metrics/queue-metrics';
export type { RedisAckQueueMetricsOptions, RedisAckQueueMetricsRegistry } from './metrics/metrics-options.interface';
export {
  RedisAckQueueMetricsModule,
  type RedisAckQueueMetricsModuleOptions,
} from './nest/metrics/redis-ack-queue-metrics.module';
export {
  RedisAckQueueScalingModule,
  type RedisAckQueueScalingModuleOptions,
} from './nest/scaling/redis-ack-queue-scaling.module';
export {
  RedisAckQueueHealthIndicator,
  type RedisAckQueueHealthResult,
} from './nest/health/redis-ack-queue.health-indicator';
export type {
  RedisAckQueueHealthOptions,
  RedisAckQueueHealthDetails,
} from './nest/health/redis-ack-queue-health.options';
export { RedisAckQueueDashboardModule } from './dashboard/redis-ack-queue-dashboard.module';
export type { DashboardGuard, RedisAckQueueDashboardOptions } from './dashboard/dashboard-options.interface';
