import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * A `send` of the Nest transport's client got no reply within its timeout (the client's
 * `timeoutMs`, or the record's). The request was cancelled where it still waited (or ran):
 * a late reply is never delivered.
 */
export class RequestTimeoutError extends RedisAckQueueError {
  /** Always `REQUEST_TIMEOUT`. */
  readonly code = 'REQUEST_TIMEOUT';
  /**
   * @param topic - The topic of the request's pattern.
   * @param id - The request message's id.
   * @param timeoutMs - How long the caller waited.
   */
  constructor(
    readonly topic: string,
    readonly id: string,
    readonly timeoutMs: number,
  ) {
    super(MESSAGES.requestTimedOut(topic, timeoutMs));
  }
}

/**
 * A `send` of the Nest transport's client named the id of a request that still waits for its
 * reply (this client's, or another's still stored): the id belongs to that request, which goes
 * on; this call pushed nothing and cancels nothing.
 */
export class DuplicateRequestError extends RedisAckQueueError {
  /** Always `DUPLICATE_REQUEST`. */
  readonly code = 'DUPLICATE_REQUEST';
  /**
   * @param topic - The topic of the request's pattern.
   * @param id - The id the two requests share.
   */
  constructor(
    readonly topic: string,
    readonly id: string,
  ) {
    super(MESSAGES.duplicateRequest(topic));
  }
}

/**
 * A pattern decorator's extras (`@EventPattern(pattern, extras)`, `@MessagePattern`) hold a key
 * that is no handler option of the transport, such as a misspelt `maxAttempt`: refused when the
 * server starts, rather than ignored.
 */
export class UnknownPatternOptionError extends RedisAckQueueError {
  /** Always `UNKNOWN_PATTERN_OPTION`. */
  readonly code = 'UNKNOWN_PATTERN_OPTION';
  /**
   * @param topic - The topic of the handler's pattern.
   * @param option - The unknown key, as written.
   * @param suggestion - The handler option it most likely meant, if one is close.
   * @param known - The handler options the extras may set.
   */
  constructor(
    readonly topic: string,
    readonly option: string,
    readonly suggestion: string | undefined,
    known: readonly string[],
  ) {
    super(MESSAGES.unknownPatternOption(topic, option, suggestion, known));
  }
}
