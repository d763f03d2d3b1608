/**
 * A transport for `@nestjs/microservices` on this queue: `RedisAckQueueServer` (a custom
 * transport strategy), `RedisAckQueueClient` (a `ClientProxy`), `RedisAckQueueContext` (what
 * `@Ctx()` gives), `RedisAckQueueRecord` (per-call message options) and the pattern-to-topic
 * mapping. Needs the optional peer `@nestjs/microservices`; the rest of the package does not.
 * @module nestjs-redis-ack-queue/microservices
 */
// First: a missing @nestjs/microservices fails with a text that names it.
import './microservices-peer';

export {
  RedisAckQueueServer,
  type RedisAckQueueServerStatus,
  type RedisAckQueueTransportEvents,
} from './redis-ack-queue.server';
export { RedisAckQueueClient } from './redis-ack-queue.client';
export { RedisAckQueueContext, type RedisAckQueueContextArgs } from './redis-ack-queue.context';
export { RedisAckQueueRecord, type RedisAckQueueRecordOptions } from './redis-ack-queue.record';
export { RedisAckQueueRejectException, type RedisAckQueueRejection } from './redis-ack-queue-reject.exception';
export { RedisAckQueueRefusalFilter } from './redis-ack-queue-refusal.filter';
export type { RedisAckQueueClientOptions, RedisAckQueueServerOptions } from './transport-options.interface';
export { REDIS_ACK_QUEUE_TRANSPORT } from './transport-id';
export { topicOfPattern } from './pattern-topic';
export { REPLY_TO_HEADER, REPLY_TTL_HEADER } from './reply-wire';
export { METADATA_HEADER, type RedisAckQueuePacketMetadata } from './packet-wire';
// The library's errors a transport user meets most, also here: the same classes as the main entry's.
export {
  DuplicateRequestError,
  InvalidOptionError,
  InvalidPayloadError,
  MessageRejectedError,
  RequestTimeoutError,
  UnknownPatternOptionError,
} from '../errors';
