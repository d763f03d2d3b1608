import { RpcException } from '@nestjs/microservices';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { MessageRejectedError } from '../errors';
import { FORBIDDEN_MESSAGE } from '../nest/nest-internals';
import { RedisAckQueueRejectException } from './redis-ack-queue-reject.exception';

/**
 * What a handler's failure means for its message. A transport sees the error as Nest's
 * exception filters made it, after guards, interceptors, pipes and the method (nothing tells
 * one stage from another); so the refusals are told by their errors: Nest's guard denial
 * ('Forbidden resource') and a {@link RedisAckQueueRejectException}. Any other error is a
 * failed delivery.
 */
export function failureOf(error: unknown, topic: string): Error {
  if (error instanceof RedisAckQueueRejectException) {
    return new MessageRejectedError(MESSAGES.transportRejected(error.reason), { cause: error });
  }
  const text = errorText(error);
  if (text === FORBIDDEN_MESSAGE) return new MessageRejectedError(MESSAGES.transportGuardDenied(topic));
  // What the dead letter shows of a failure: the filters' text, never their objects (a
  // validation error may hold the payload).
  return new Error(MESSAGES.transportHandlerFailed(text));
}

/** Whether a failure is a refusal: the message is dead-lettered at once. */
export function isRefusal(failure: Error): boolean {
  return failure instanceof MessageRejectedError;
}

/** The text of an error as filters make them: `{ status, message }`, an RpcException, an Error or a string. */
function errorText(error: unknown): string {
  let text: unknown;
  if (error instanceof RpcException) {
    const inner = error.getError();
    text = typeof inner === 'string' ? inner : (inner as { message?: unknown } | null)?.message;
  } else if (typeof error === 'object' && error !== null) {
    text = (error as { message?: unknown }).message;
  } else {
    text = error;
  }
  if (typeof text !== 'string' || text === '') return 'an error without a text message';
  const line = text.split('\n')[0];
  return line.length > 500 ? `${line.slice(0, 500)}...` : line;
}
