import { InvalidOptionError } from '../../errors';
import { QueueTracing } from './queue-tracing';

/** The service's tracing, when its `tracing` option is on (only then is `@opentelemetry/api` loaded). */
export function tracingFor(option: unknown): QueueTracing | undefined {
  if (option === undefined || typeof option === 'boolean') return option ? new QueueTracing() : undefined;
  const expected = 'true, false or { batchSpans?: boolean }';
  if (typeof option !== 'object' || option === null) throw new InvalidOptionError('tracing', option, expected);
  const { batchSpans, ...rest } = option as { batchSpans?: unknown };
  if (Object.keys(rest).length > 0 || (batchSpans !== undefined && typeof batchSpans !== 'boolean'))
    throw new InvalidOptionError('tracing', option, expected);
  return new QueueTracing({ batchSpans: batchSpans === true });
}
