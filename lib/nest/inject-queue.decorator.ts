import { Inject } from '@nestjs/common';
import { getQueueToken } from './queue-tokens';

/**
 * Injects a queue's `RedisAckQueueService`: the one registered with `forRoot({ name })`, or
 * the default queue without a name (the same as injecting `RedisAckQueueService` by class).
 */
export function InjectQueue(name?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getQueueToken(name));
}
