import { SetMetadata } from '@nestjs/common';
import type {
  BatchContext,
  BatchMessage,
  BatchOptions,
  MessageContext,
  QueueHandlerOptions,
  Topic,
} from '../interfaces';
import { QUEUE_HANDLER_METADATA } from '../common/redis-ack-queue.constants';
import { installMissingModuleHook } from './missing-module.hook';

/** Options of `@QueueHandler()`: the consumer options, and which queue to consume from. */
export interface QueueHandlerDecoratorOptions extends QueueHandlerOptions {
  /** The named queue (`forRoot({ name })`) to consume from. Default: the default queue. */
  queue?: string;
}

/** What `@QueueHandler` records on a method. */
export interface QueueHandlerMetadata {
  /** The topic the method consumes. */
  topic: string;
  /** The queue's registration name; undefined for the default queue. */
  queue?: string;
  /** The handler's own options, as given (`{}` when none). */
  options: QueueHandlerOptions;
}

/**
 * The decorator `@QueueHandler(topic)` returns: for a typed topic (`defineTopic<T>`), the
 * method's first parameter must take a `T`, or the code does not compile.
 * @typeParam M - The decorated method's type.
 */
export type QueueHandlerDecorator<T> = <M extends (payload: T, context: MessageContext) => unknown>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * The decorator `@QueueHandler(topic, { batch })` returns: the method takes
 * `(messages: BatchMessage<T>[], context: BatchContext)`.
 * @typeParam M - The decorated method's type.
 */
export type QueueBatchHandlerDecorator<T> = <M extends (messages: BatchMessage<T>[], context: BatchContext) => unknown>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a provider method as the consumer of `topic`: `handle(payload, context)`, or with option
 * `batch`, `handle(messages, context)` (see {@link BatchOptions}). The
 * message is acked when the returned promise resolves and retried when it rejects.
 * Unset options come from the module's defaults. Checked at startup, where an error
 * can name the class and method. A plain string topic leaves `T` at `never`: any first
 * parameter is accepted, as no payload type is known.
 *
 * A bad topic or option, or a second handler for the same topic, fails the app's bootstrap
 * with {@link InvalidQueueHandlerError}. One consumer per handler runs in each process (unless
 * the module has `consumers: false`).
 *
 * An app that imports no `RedisAckQueueModule.forRoot()` / `forRootAsync()` runs no handler:
 * when it bootstraps, each such class is named once in a warning (the class gets an
 * `onApplicationBootstrap` for it, which runs its own one, if any, as before).
 */
export function QueueHandler<T = never>(
  topic: Topic<T>,
  options: QueueHandlerDecoratorOptions & { batch: BatchOptions },
): QueueBatchHandlerDecorator<T>;
export function QueueHandler<T = never>(
  topic: Topic<T>,
  options?: QueueHandlerDecoratorOptions,
): QueueHandlerDecorator<T>;
export function QueueHandler<T = never>(
  topic: Topic<T>,
  options: QueueHandlerDecoratorOptions = {},
): QueueHandlerDecorator<T> & QueueBatchHandlerDecorator<T> {
  const { queue, ...handlerOptions } = options ?? {};
  const decorate = SetMetadata<string, QueueHandlerMetadata>(QUEUE_HANDLER_METADATA, {
    topic,
    queue,
    options: handlerOptions,
  });
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
    decorate(target, key, descriptor);
    // A static method is no handler (only prototypes are scanned): nothing to warn about.
    if (typeof target === 'object') installMissingModuleHook(target);
  };
}
