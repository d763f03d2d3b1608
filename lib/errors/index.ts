export * from './redis-ack-queue.error';
export * from './input.errors';
export * from './redis.errors';
export * from './consumer.errors';
export * from './module.errors';
export * from './retry-later.error';
export * from './schedule.errors';
export * from './job-control.errors';
