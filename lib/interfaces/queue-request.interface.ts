import type { MessageContext } from './consumer.interface';

/**
 * What a request-scoped handler (or a request-scoped provider it depends on) receives as
 * `@Inject(REQUEST)`: each message gets a fresh instance, and this object for its request.
 */
export interface QueueRequest {
  /** The message being handled: id, topic, attempt, headers, signal, extendLease. */
  queueMessage: MessageContext;
}

/**
 * A value named like the interface {@link QueueRequest}, so that a plain `import { QueueRequest }` works in a decorated
 * signature under `isolatedModules` with `emitDecoratorMetadata` (as `nest new` sets them), where an
 * interface alone needs `import type`. TypeScript records the parameter as `Object`, as for any
 * interface; nothing is an instance of this marker.
 */
export const QueueRequest: unique symbol = Symbol('nestjs-redis-ack-queue:QueueRequest');
