/**
 * Test helpers for apps that use nestjs-redis-ack-queue, imported from
 * `nestjs-redis-ack-queue/testing`: a private Redis server per test file, the app's queues pointed
 * at it (with chosen handlers replaced) without import-order tricks, readers of what a topic holds,
 * and contexts for unit-testing a handler method.
 * @module nestjs-redis-ack-queue/testing
 */
export { startTestRedis, type TestRedis, type TestRedisOptions } from './test-redis';
export { overrideQueueForTesting, type QueueTestingModuleBuilder, type QueueTestingOptions } from './override-queue';
export { messagesOf, deadLettersOf, type MessagesOfOptions } from './queue-contents';
export { pushedTo, type PushedMessage } from './pushed-messages';
export { createMessageContext, type MessageContextCalls, type TestMessageContext } from './message-context';
export {
  createBatchContext,
  createBatchMessage,
  type BatchContextCalls,
  type BatchFailCall,
  type TestBatchContext,
  type TestBatchMessage,
} from './batch-context';
export {
  REDIS_ACK_QUEUE_TEST_OVERRIDES,
  type RedisAckQueueTestHandler,
  type RedisAckQueueTestOverrides,
} from '../nest/queue-test-overrides';
export { RedisServerNotFoundError, TestRedisStartError } from '../errors/test-redis.errors';
export { UnknownHandlerOverrideError } from '../errors';
