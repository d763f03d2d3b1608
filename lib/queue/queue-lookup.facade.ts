import { QueueProducerFacade } from './queue-producer.facade';

/**
 * Looking messages up, listing them by state and cancelling them. A layer of
 * {@link RedisAckQueueService}, not used on its own.
 * @internal
 */
export abstract class QueueLookupFacade extends QueueProducerFacade {}
