import { SetMetadata } from '@nestjs/common';
import type { RedisAckQueueEventType } from '../interfaces';
import { QUEUE_EVENT_METADATA } from '../common/redis-ack-queue.constants';

/** Which events an `@OnQueueEvent` method hears besides their type. */
export interface OnQueueEventOptions {
  /** Only events of this topic. Default: every topic. */
  topic?: string;
  /**
   * The queue whose events to hear, by name. Default: the module's queue (the
   * `RedisAckQueueService` provider), the only one for now: a name fails startup.
   */
  queue?: string;
}

/** What `@OnQueueEvent` records on a method. */
export interface OnQueueEventMetadata extends OnQueueEventOptions {
  /** The type of event heard. */
  type: RedisAckQueueEventType;
}

/**
 * Calls a provider method with every event of `type` from `events$` (optionally of one
 * topic): `onDead(event: RedisAckQueueEvent)`. Events carry ids, attempts and errors, never
 * payloads. A listener that throws (or rejects) is logged and the stream goes on. Checked at
 * startup, where an error can name the class and method.
 */
export function OnQueueEvent(type: RedisAckQueueEventType, options: OnQueueEventOptions = {}): MethodDecorator {
  return SetMetadata<string, OnQueueEventMetadata>(QUEUE_EVENT_METADATA, { ...options, type });
}
