export * from './backoff.interface';
export * from './consumer.interface';
export * from './events.interface';
export * from './message.interface';
export * from './redis-ack-queue-options.interface';
export * from './topic.interface';
export * from './queue-request.interface';
