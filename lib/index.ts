export { RedisAckQueueModule } from './redis-ack-queue.module';
export {
  REDIS_ACK_QUEUE_OPTIONS,
  REDIS_ACK_QUEUE_OPTIONS_TYPE,
  REDIS_ACK_QUEUE_ASYNC_OPTIONS_TYPE,
} from './redis-ack-queue.module-definition';
export { RedisAckQueueService, type ReservedBatch } from './redis-ack-queue.service';
export { QueueHandler, type QueueHandlerMetadata } from './decorators/queue-handler.decorator';
export { DEFAULTS, DEFAULT_PREFIX } from './redis-ack-queue.constants';
export { queueKeys, type QueueKeys } from './redis/queue-keys';
export * from './errors';
export * from './interfaces';
