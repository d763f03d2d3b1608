export { RedisAckQueueModule } from './nest/redis-ack-queue.module';
export {
  REDIS_ACK_QUEUE_OPTIONS,
  REDIS_ACK_QUEUE_OPTIONS_TYPE,
  REDIS_ACK_QUEUE_ASYNC_OPTIONS_TYPE,
} from './nest/redis-ack-queue.module-definition';
export { RedisAckQueueService } from './queue/redis-ack-queue.service';
export { QueueHandler, type QueueHandlerMetadata } from './nest/queue-handler.decorator';
export { OnQueueEvent, type OnQueueEventMetadata, type OnQueueEventOptions } from './nest/on-queue-event.decorator';
export { REDIS_ACK_QUEUE_CONTEXT_TYPE, type RedisAckQueueContextType } from './redis-ack-queue.constants';
export * from './errors';
export * from './interfaces';
