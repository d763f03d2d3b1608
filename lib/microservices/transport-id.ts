/**
 * The transport id of {@link RedisAckQueueServer}, for a pattern decorator that should bind to
 * this transport alone in an app with several: `@EventPattern('order.created', REDIS_ACK_QUEUE_TRANSPORT)`.
 */
export const REDIS_ACK_QUEUE_TRANSPORT: unique symbol = Symbol.for('nestjs-redis-ack-queue.transport');
