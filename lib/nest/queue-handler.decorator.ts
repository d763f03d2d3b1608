import { SetMetadata } from '@nestjs/common';
import type { QueueHandlerOptions } from '../interfaces';
import { QUEUE_HANDLER_METADATA } from '../redis-ack-queue.constants';

/** Options of `@QueueHandler()`: the consumer options, and which queue to consume from. */
export interface QueueHandlerDecoratorOptions extends QueueHandlerOptions {
  /** The named queue (`forRoot({ name })`) to consume from. Default: the default queue. */
  queue?: string;
}

/** What `@QueueHandler` records on a method. */
export interface QueueHandlerMetadata {
  topic: string;
  /** The queue's registration name; undefined for the default queue. */
  queue?: string;
  options: QueueHandlerOptions;
}

/**
 * Marks a provider method as the consumer of `topic`: `handle(payload, context)`. The
 * message is acked when the returned promise resolves and retried when it rejects.
 * Unset options come from the module's defaults. Checked at startup, where an error
 * can name the class and method.
 */
export function QueueHandler(topic: string, options: QueueHandlerDecoratorOptions = {}): MethodDecorator {
  const { queue, ...handlerOptions } = options ?? {};
  return SetMetadata<string, QueueHandlerMetadata>(QUEUE_HANDLER_METADATA, { topic, queue, options: handlerOptions });
}
