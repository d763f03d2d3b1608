import { MESSAGES } from '../redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/** A topic (or prefix) name outside 1-200 characters of `A-Z a-z 0-9 . _ - :`. */
export class InvalidTopicError extends RedisAckQueueError {
  readonly code = 'INVALID_TOPIC';
  constructor(readonly topic: unknown, message = MESSAGES.invalidTopic(topic)) {
    super(message);
  }
}

/** A message id that is not a non-empty string of at most 256 characters. */
export class InvalidMessageIdError extends RedisAckQueueError {
  readonly code = 'INVALID_MESSAGE_ID';
  constructor(readonly id: unknown) {
    super(MESSAGES.invalidId(id));
  }
}

/** A payload that is undefined or cannot be stored as JSON without changing it. */
export class InvalidPayloadError extends RedisAckQueueError {
  readonly code = 'INVALID_PAYLOAD';
  constructor(readonly topic: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A payload whose JSON is larger than `maxPayloadBytes`. */
export class PayloadTooLargeError extends RedisAckQueueError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(readonly topic: string, readonly bytes: number, readonly limit: number) {
    super(MESSAGES.payloadTooLarge(topic, bytes, limit));
  }
}

/** An option with a value that makes no sense (negative delay, zero lease, ...). */
export class InvalidOptionError extends RedisAckQueueError {
  readonly code = 'INVALID_OPTION';
  constructor(readonly option: string, readonly value: unknown, expected: string) {
    super(MESSAGES.invalidOption(option, value, expected));
  }
}
