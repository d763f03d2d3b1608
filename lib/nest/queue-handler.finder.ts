import type { MetadataScanner, Reflector } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { InvalidQueueHandlerError, RedisAckQueueError } from '../errors';
import { resolveConsumerSettings } from '../queue/settings';
import { assertQueueName, assertTopic } from '../queue/validation';
import { QUEUE_HANDLER_METADATA } from '../redis-ack-queue.constants';
import { MESSAGES } from '../redis-ack-queue.messages';
import type { QueueHandlerMetadata } from './queue-handler.decorator';
import { DEFAULT_QUEUE } from './queue-tokens';

/** A `@QueueHandler` method of a provider or controller. */
export interface HandlerSite {
  wrapper: InstanceWrapper;
  method: string;
  metadata: QueueHandlerMetadata;
  /** The queue it consumes from (`default` when the decorator names none). */
  queue: string;
  /** `Class.method`, for messages. */
  where: string;
}

/** Every `@QueueHandler` method of the given providers and controllers, checked: valid topic, options and queue name. */
export function findHandlerSites(
  wrappers: InstanceWrapper[],
  scanner: MetadataScanner,
  reflector: Reflector,
): HandlerSite[] {
  const sites: HandlerSite[] = [];
  for (const wrapper of wrappers) {
    const prototype = (wrapper.metatype as { prototype?: object } | null)?.prototype;
    if (!wrapper.metatype || !prototype || wrapper.inject) continue;
    for (const method of scanner.getAllMethodNames(prototype)) {
      const target = (prototype as Record<string, () => unknown>)[method];
      const metadata: QueueHandlerMetadata | undefined = reflector.get(QUEUE_HANDLER_METADATA, target);
      if (!metadata) continue;
      const where = `${wrapper.metatype.name}.${method}`;
      check(metadata, where);
      sites.push({ wrapper, method, metadata, queue: metadata.queue ?? DEFAULT_QUEUE, where });
    }
  }
  return sites;
}

function check(metadata: QueueHandlerMetadata, where: string): void {
  try {
    assertTopic(metadata.topic);
    if (metadata.queue !== undefined) assertQueueName(metadata.queue);
    resolveConsumerSettings(metadata.options, undefined);
  } catch (error) {
    if (!(error instanceof RedisAckQueueError)) throw error;
    throw new InvalidQueueHandlerError(where, MESSAGES.invalidHandler(where, error.message), { cause: error });
  }
}
