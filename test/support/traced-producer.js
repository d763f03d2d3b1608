// A producer in a process of its own, with OpenTelemetry: pushes one message inside a span
// and prints the trace and span ids it made. Uses the built library.
// Env: REDIS_URL, TOPIC.
const { context, propagation, trace } = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { W3CTraceContextPropagator } = require('@opentelemetry/core');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { RedisAckQueueService } = require('../../dist');

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const queue = new RedisAckQueueService({ connection: process.env.REDIS_URL, tracing: true });
const tracer = trace.getTracer('producer-app');
tracer
  .startActiveSpan('request', async (span) => {
    await queue.push(process.env.TOPIC, { secret: 'payload-from-producer' });
    span.end();
  })
  .then(() => queue.close())
  .then(() => {
    const send = exporter.getFinishedSpans().find((s) => s.name.startsWith('send '));
    process.stdout.write(
      `${JSON.stringify({ traceId: send.spanContext().traceId, spanId: send.spanContext().spanId })}\n`,
    );
  });
