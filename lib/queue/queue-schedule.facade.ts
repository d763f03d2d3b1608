import { QueuePauseFacade } from './queue-pause.facade';

/**
 * Repeating and cron schedules. A layer of {@link RedisAckQueueService}, not used on its own.
 * @internal
 */
export abstract class QueueScheduleFacade extends QueuePauseFacade {}
