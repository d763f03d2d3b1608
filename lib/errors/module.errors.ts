import { MESSAGES } from '../redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** Two RedisAckQueueModule registrations of one queue name (two unnamed ones included). */
export class DuplicateQueueRegistrationError extends RedisAckQueueError {
  readonly code = 'DUPLICATE_QUEUE_REGISTRATION';
  constructor(
    readonly queue: string,
    isDefault: boolean,
  ) {
    super(MESSAGES.duplicateQueue(queue, isDefault));
  }
}

/** A @QueueHandler names a queue (its `queue` option) that no registration provides. */
export class UnknownQueueError extends RedisAckQueueError {
  readonly code = 'UNKNOWN_QUEUE';
  constructor(
    readonly where: string,
    readonly queue: string,
    readonly registered: readonly string[],
  ) {
    super(MESSAGES.unknownQueue(where, queue, [...registered]));
  }
}
