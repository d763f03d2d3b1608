import type { ScheduleDefinition } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';

/**
 * The module option `schedules`: handed to the service's declarations, which upsert each at
 * startup, in order, and again when Redis comes back without the prefix's data; a bad one
 * fails startup (the service is closed first, so nothing keeps running).
 */
export async function upsertSchedules(
  service: RedisAckQueueService,
  schedules: ScheduleDefinition[] | undefined,
): Promise<void> {
  if (schedules === undefined) return;
  try {
    await service.declareSchedules(schedules);
  } catch (error) {
    await service.close(0);
    throw error;
  }
}
