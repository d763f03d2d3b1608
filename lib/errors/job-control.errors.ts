import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * The message was cancelled (`cancel()`) while its handler ran: the reason of the handler's
 * aborted `context.signal`. The delivery's outcome is ignored: it counts as neither a success
 * nor a failure.
 */
export class MessageCancelledError extends RedisAckQueueError {
  /** Always `MESSAGE_CANCELLED`. */
  readonly code = 'MESSAGE_CANCELLED';
  /**
   * @param topic - The message's topic.
   * @param id - The message's id.
   */
  constructor(
    readonly topic: string,
    readonly id: string,
  ) {
    super(MESSAGES.messageCancelled(topic, id));
  }
}

/**
 * A value that cannot be stored with a message: a `context.progress` value, or the result
 * given to `ack`, that is not JSON data (functions, BigInt, cycles...) or whose JSON is over
 * its limit (4 KiB for progress, `maxPayloadBytes` for a result). Nothing was changed.
 */
export class InvalidStoredValueError extends RedisAckQueueError {
  /** Always `INVALID_STORED_VALUE`. */
  readonly code = 'INVALID_STORED_VALUE';
  /**
   * @param what - `progress` or `result`.
   * @param topic - The message's topic.
   * @param reason - What is wrong with the value (never the value itself).
   */
  constructor(
    readonly what: 'progress' | 'result',
    readonly topic: string,
    reason: string,
  ) {
    super(MESSAGES.invalidStoredValue(what, topic, reason));
  }
}

/**
 * The result of a durable step (`context.step(name, fn)`) cannot be stored with its message:
 * it is not JSON data (functions, BigInt, cycles...), its JSON is over 64 KiB, or the message
 * holds 100 steps already (then `fn` did not run). Nothing was stored: a later delivery runs
 * the step again.
 */
export class InvalidStepResultError extends RedisAckQueueError {
  /** Always `INVALID_STEP_RESULT`. */
  readonly code = 'INVALID_STEP_RESULT';
  /**
   * @param topic - The message's topic.
   * @param id - The message's id.
   * @param step - The step's name.
   * @param problem - What is wrong: `value` (not JSON data, or too large) or `count` (too many steps).
   * @param reason - What is wrong with the value, in words (never the value itself).
   */
  constructor(
    readonly topic: string,
    readonly id: string,
    readonly step: string,
    readonly problem: 'value' | 'count',
    reason: string,
  ) {
    super(MESSAGES.invalidStepResult(topic, id, step, reason));
  }
}

/**
 * `requeueDead` was given a flow's parent that went to the dead letters as child-failed, and a
 * failed child below it is gone for good (cancelled, or its dead letter deleted): the parent runs
 * only after every child ended well, so requeued it would wait forever. Nothing was requeued.
 * Push the flow again (or requeue its children and the parent with them while their dead letters
 * exist), or purge the parent.
 */
export class FlowChildGoneError extends RedisAckQueueError {
  /** Always `FLOW_CHILD_GONE`. */
  readonly code = 'FLOW_CHILD_GONE';
  /**
   * @param topic - The parent's topic.
   * @param id - The parent's id.
   * @param childTopic - The topic of the child that is gone.
   * @param childId - The id of the child that is gone.
   */
  constructor(
    readonly topic: string,
    readonly id: string,
    readonly childTopic: string,
    readonly childId: string,
  ) {
    super(MESSAGES.flowChildGone(topic, id, childTopic, childId));
  }
}
