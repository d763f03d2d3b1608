import { InvalidOptionError } from '../../errors';
import { QueueTracing } from './queue-tracing';

/** The service's tracing, when its `tracing` option is on (only then is `@opentelemetry/api` loaded). */
export function tracingFor(option: unknown): QueueTracing | undefined {
  if (option !== undefined && typeof option !== 'boolean')
    throw new InvalidOptionError('tracing', option, 'true or false');
  return option ? new QueueTracing() : undefined;
}
