import { MESSAGES } from '../common/redis-ack-queue.messages';
import { keptValue } from './error-text';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * A schedule that cannot tick: a bad name, an invalid cron expression or time zone, both or
 * neither of `cron` and `everyMs`, or `endAt` before `startAt`.
 */
export class InvalidScheduleError extends RedisAckQueueError {
  /** Always `INVALID_SCHEDULE`. */
  readonly code = 'INVALID_SCHEDULE';
  /** The schedule's name; undefined when it was an object (see keptValue). */
  readonly schedule: unknown;
  /**
   * @param topic - The schedule's topic.
   * @param schedule - The schedule's name, as given.
   * @param reason - What is wrong and what to change (said in the message).
   */
  constructor(
    readonly topic: string,
    schedule: unknown,
    readonly reason: string,
  ) {
    super(MESSAGES.invalidSchedule(topic, schedule, reason));
    this.schedule = keptValue(schedule);
  }
}
