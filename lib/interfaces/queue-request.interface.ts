import type { MessageContext } from './consumer.interface';

/**
 * What a request-scoped handler (or a request-scoped provider it depends on) receives as
 * `@Inject(REQUEST)`: each message gets a fresh instance, and this object for its request.
 */
export interface QueueRequest {
  /** The message being handled: id, topic, attempt, headers, signal, extendLease. */
  queueMessage: MessageContext;
}
