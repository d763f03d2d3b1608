import { RpcException } from '@nestjs/microservices';

/** What the caller of a refused request receives. */
export interface RedisAckQueueRejection {
  /** Always `'error'`, as Nest's transports answer errors. */
  status: 'error';
  /** Why the message was refused. */
  message: string;
}

/**
 * Throw it from a handler, a guard or a pipe (ValidationPipe's `exceptionFactory`) of
 * {@link RedisAckQueueServer} to refuse a message: an event is dead-lettered at once as
 * `rejected` (no retry), a request is answered with this error and dead-lettered too. Any
 * other error of an event's handler is a failed delivery, retried with backoff.
 *
 * It passes Nest's exception filters as it is (`getError()` returns the exception, as
 * Nest's `KafkaRetriableException` does), so the transport can tell it from other errors;
 * the caller of a request receives `{ message, error }`.
 * @example
 * ```ts
 * new ValidationPipe({ exceptionFactory: (errors) => new RedisAckQueueRejectException(`${errors}`) })
 * ```
 */
export class RedisAckQueueRejectException extends RpcException {
  /**
   * @param reason - Why the message is refused (kept in its dead letter and sent to a caller).
   */
  constructor(readonly reason: string) {
    super(reason);
  }

  /** The exception itself: Nest's filters pass it on unchanged. */
  override getError(): this {
    return this;
  }

  /** What a caller of `send` receives. */
  toJSON(): RedisAckQueueRejection {
    return { status: 'error', message: this.reason };
  }
}
