export { RedisAckQueueModule } from './nest/redis-ack-queue.module';
export type {
  RedisAckQueueAsyncOptions,
  RedisAckQueueOptionsFactory,
  RedisAckQueueRegistrationOptions,
  RedisAckQueueRootOptions,
} from './nest/redis-ack-queue.module-definition';
export { DEFAULT_QUEUE, REDIS_ACK_QUEUE_OPTIONS, getQueueOptionsToken, getQueueToken } from './nest/queue-tokens';
export { InjectQueue } from './nest/inject-queue.decorator';
export { RedisAckQueueService } from './queue/redis-ack-queue.service';
export { defineTopic } from './queue/define-topic';
export {
  QueueHandler,
  type QueueHandlerDecorator,
  type QueueHandlerDecoratorOptions,
  type QueueHandlerMetadata,
} from './nest/queue-handler.decorator';
export * from './errors';
export * from './interfaces';
