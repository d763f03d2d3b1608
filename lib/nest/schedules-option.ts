import { InvalidOptionError } from '../errors';
import type { ScheduleDefinition } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';

/**
 * The module option `schedules`: each is upserted at startup, in order; a bad one fails
 * startup (the service is closed first, so nothing keeps running).
 */
export async function upsertSchedules(
  service: RedisAckQueueService,
  schedules: ScheduleDefinition[] | undefined,
): Promise<void> {
  if (schedules === undefined) return;
  try {
    if (!Array.isArray(schedules))
      throw new InvalidOptionError('schedules', schedules, 'an array of { topic, name, cron | everyMs, ... }');
    for (const schedule of schedules) {
      if (typeof schedule !== 'object' || schedule === null)
        throw new InvalidOptionError('schedules', schedule, 'an object { topic, name, cron | everyMs, ... }');
      const { topic, name, ...options } = schedule;
      await service.upsertSchedule(topic, name, options);
    }
  } catch (error) {
    await service.close(0);
    throw error;
  }
}
