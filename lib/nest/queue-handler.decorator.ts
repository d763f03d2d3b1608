import { SetMetadata } from '@nestjs/common';
import type { QueueHandlerOptions } from '../interfaces';
import { QUEUE_HANDLER_METADATA } from '../redis-ack-queue.constants';

/** What `@QueueHandler` records on a method. */
export interface QueueHandlerMetadata {
  /** The topic the method consumes. */
  topic: string;
  /** The handler's own options, as given (`{}` when none). */
  options: QueueHandlerOptions;
}

/**
 * Marks a provider method as the consumer of `topic`: `handle(payload, context)`. The
 * message is acked when the returned promise resolves and retried when it rejects.
 * Unset options come from the module's defaults. Checked at startup, where an error
 * can name the class and method: a bad topic or option, or a second handler for the same
 * topic, fails the app's bootstrap with {@link InvalidQueueHandlerError}. One consumer per
 * handler runs in each process (unless the module has `consumers: false`).
 *
 * @param topic - The topic to consume: 1-200 characters of `A-Z a-z 0-9 . _ - :`.
 * @param options - Overrides of the module's consumer settings for this handler.
 * @example
 * ```ts
 * @Injectable()
 * export class OrderHandlers {
 *   @QueueHandler('order.created', { concurrency: 10, maxAttempts: 5, timeoutMs: 30_000 })
 *   async sendConfirmation(payload: { orderId: string }, context: MessageContext) {
 *     await this.mailer.send(payload.orderId, { signal: context.signal }); // acked when this resolves
 *   }
 * }
 * ```
 */
export function QueueHandler(topic: string, options: QueueHandlerOptions = {}): MethodDecorator {
  return SetMetadata<string, QueueHandlerMetadata>(QUEUE_HANDLER_METADATA, { topic, options });
}
