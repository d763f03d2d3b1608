import { QueueLookupFacade } from './queue-lookup.facade';

/**
 * Pausing and resuming topics for every consumer. A layer of {@link RedisAckQueueService},
 * not used on its own.
 * @internal
 */
export abstract class QueuePauseFacade extends QueueLookupFacade {}
