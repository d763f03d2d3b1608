import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReservedMessage } from '../../lib';
import { QueueTracing } from '../../lib/observability/tracing/queue-tracing';
import { useInMemoryTracing } from '../support/in-memory-tracing';

const { exporter } = useInMemoryTracing();
const [traceId, spanId] = ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7'];

/** A reserved message as the engine decodes one (only what tracing reads matters). */
const message = (id: string, flags = '01'): ReservedMessage<unknown> =>
  ({
    id,
    attempt: 1,
    headers: { traceparent: `00-${traceId}-${spanId}-${flags}` },
  }) as unknown as ReservedMessage<unknown>;

describe('DeliveryTracing', () => {
  it('ends a batch span once every message of the batch settled or was handed back', () => {
    const tracing = new QueueTracing({ batchSpans: true }).deliveries('jobs');
    const [a, b, c] = [message('a'), message('b'), message('c')];
    tracing.reserved([a, b, c]);
    const first = tracing.start(a);
    expect(tracing.start(b)).toBe(first);
    tracing.settled(first, true, new TypeError('broke'));
    expect(exporter.getFinishedSpans()).toEqual([]);
    tracing.released([c]);
    expect(exporter.getFinishedSpans()).toEqual([]);
    tracing.settled(first, false, undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('process jobs');
    expect(span.links.map((l) => [l.context.spanId, l.attributes?.['messaging.message.id']])).toEqual([
      [spanId, 'a'],
      [spanId, 'b'],
      [spanId, 'c'],
    ]);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'broke' });
    // A message started again later (a new delivery) is not counted in the ended batch.
    tracing.released([a]);
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });

  it('gives a message a span of its own under its parent, none when the parent is not sampled', () => {
    const tracing = new QueueTracing().deliveries('jobs');
    const sampled = tracing.start(message('a'));
    expect(trace.getSpan(sampled.context)).toBe(sampled.span);
    tracing.settled(sampled, false, undefined);
    const unsampled = tracing.start(message('b', '00'));
    expect(unsampled.span).toBeUndefined();
    expect(trace.getSpanContext(unsampled.context)).toMatchObject({ traceId, spanId, traceFlags: 0 });
    const [span] = exporter.getFinishedSpans();
    expect([span.parentSpanContext?.spanId, span.attributes['messaging.message.id']]).toEqual([spanId, 'a']);
  });
});
