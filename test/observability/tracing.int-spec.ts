import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { firstValueFrom } from 'rxjs';
import { filter, take, toArray } from 'rxjs/operators';
import { InvalidOptionError, RedisAckQueueService } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { useInMemoryTracing } from '../support/in-memory-tracing';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

const { exporter } = useInMemoryTracing();

const spansNamed = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Two pushMany calls of two messages each (`first-1`, `first-2`, `second-...`), each in a trace of its own. */
async function pushInTwoTraces(queue: RedisAckQueueService, topic: string): Promise<void> {
  const app = trace.getTracer('app');
  for (const name of ['first', 'second']) {
    await app.startActiveSpan(name, async (span) => {
      await queue.pushMany(topic, [{ payload: `${name}-1` }, { payload: `${name}-2` }]);
      span.end();
    });
  }
}

describe('OpenTelemetry tracing', () => {
  const fx = useRedis();

  async function settled(queue: RedisAckQueueService, topic: string, count: number) {
    return firstValueFrom(
      queue.events$.pipe(
        filter((e) => e.topic === topic && ['acked', 'retried', 'dead'].includes(e.type)),
        take(count),
        toArray(),
      ),
    );
  }

  it('continues the trace of the push in the handler, with messaging attributes and no payload', async () => {
    const queue = await fx.service({ tracing: true });
    const topic = uniqueTopic();
    let activeInHandler: string | undefined;
    let headers: Record<string, string> = {};
    const done = settled(queue, topic, 1);
    const consumer = queue.consume(topic, (_payload, message) => {
      activeInHandler = trace.getActiveSpan()?.spanContext().spanId;
      headers = message.headers;
    });
    const [{ id }] = await trace.getTracer('app').startActiveSpan('request', async (span) => {
      const result = await queue.pushMany(topic, [
        { payload: { card: 'secret-payload' }, id: 'm-1', headers: { origin: 'test' } },
      ]);
      span.end();
      return result;
    });
    await done;
    await consumer.close();
    const [request] = spansNamed('request');
    const [send] = spansNamed(`send ${topic}`);
    const [processSpan] = spansNamed(`process ${topic}`);
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(parentOf(send)).toBe(request.spanContext().spanId);
    expect(send.attributes).toEqual({
      'messaging.system': 'redis-ack-queue',
      'messaging.destination.name': topic,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.message.id': id,
    });
    expect(processSpan.kind).toBe(SpanKind.CONSUMER);
    expect(processSpan.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(parentOf(processSpan)).toBe(send.spanContext().spanId);
    expect(processSpan.attributes).toEqual({
      'messaging.system': 'redis-ack-queue',
      'messaging.destination.name': topic,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.message.id': 'm-1',
      'messaging.redis_ack_queue.attempt': 1,
    });
    expect(activeInHandler).toBe(processSpan.spanContext().spanId);
    expect(headers).toEqual({
      origin: 'test',
      traceparent: `00-${send.spanContext().traceId}-${send.spanContext().spanId}-01`,
    });
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => [s.name, s.attributes, s.events]))).not.toContain(
      'secret-payload',
    );
  });

  it('records the error of a failed delivery, one span per attempt', async () => {
    expectLogs(/failed on attempt/, /went to the dead letters/);
    const queue = await fx.service({ tracing: true });
    const topic = uniqueTopic();
    const done = settled(queue, topic, 2);
    const consumer = queue.consume(
      topic,
      () => {
        throw new TypeError('handler broke');
      },
      { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 1 } },
    );
    await queue.push(topic, 'x');
    await done;
    await consumer.close();
    const spans = spansNamed(`process ${topic}`);
    expect(spans.map((s) => s.attributes['messaging.redis_ack_queue.attempt'])).toEqual([1, 2]);
    for (const span of spans) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler broke' });
      expect(span.attributes['error.type']).toBe('TypeError');
      expect(span.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([
        ['exception', 'handler broke'],
      ]);
    }
  });

  it('continues a trace started in another process (producer and consumer apart)', async () => {
    const queue = await fx.service({ tracing: true });
    const topic = uniqueTopic();
    const done = settled(queue, topic, 1);
    const consumer = queue.consume(topic, () => undefined);
    const { stdout } = await promisify(execFile)(process.execPath, [join(__dirname, '../support/traced-producer.js')], {
      env: { ...process.env, REDIS_URL: fx.server.url, TOPIC: topic },
    });
    const producer = JSON.parse(stdout) as { traceId: string; spanId: string };
    await done;
    await consumer.close();
    const [processSpan] = spansNamed(`process ${topic}`);
    expect(processSpan.spanContext().traceId).toBe(producer.traceId);
    expect(parentOf(processSpan)).toBe(producer.spanId);
  });

  it('gives each message of one batch the parent of its own push', async () => {
    const queue = await fx.service({ tracing: true });
    const topic = uniqueTopic();
    await pushInTwoTraces(queue, topic);
    const done = settled(queue, topic, 4);
    const active = new Map<unknown, string | undefined>();
    const consumer = queue.consume(topic, (payload) => {
      active.set(payload, trace.getActiveSpan()?.spanContext().spanId);
    });
    await done;
    await consumer.close();
    const sends = new Map(spansNamed(`send ${topic}`).map((s) => [s.spanContext().spanId, s]));
    const spans = new Map(spansNamed(`process ${topic}`).map((s) => [s.spanContext().spanId, s]));
    expect(spans.size).toBe(4);
    for (const [payload, spanId] of active) {
      // The handler's active span is its own process span, child of the send of its push.
      const send = sends.get(parentOf(spans.get(spanId!)!)!)!;
      const [request] = spansNamed(String(payload).split('-')[0]);
      expect(parentOf(send)).toBe(request.spanContext().spanId);
      expect(spans.get(spanId!)!.spanContext().traceId).toBe(request.spanContext().traceId);
    }
  });

  it('runs a message whose trace is not sampled in its parent context, with no span of its own', async () => {
    const queue = await fx.service({ tracing: true });
    const topic = uniqueTopic();
    const [traceId, spanId] = ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7'];
    let active: { traceId: string; spanId: string; traceFlags: number } | undefined;
    const done = settled(queue, topic, 1);
    const consumer = queue.consume(topic, () => {
      active = trace.getActiveSpan()?.spanContext();
      trace.getTracer('app').startSpan('inner').end();
    });
    await queue.pushMany(topic, [{ payload: 'x', headers: { traceparent: `00-${traceId}-${spanId}-00` } }]);
    await done;
    await consumer.close();
    expect(active).toMatchObject({ traceId, spanId, traceFlags: 0 });
    // The default sampler (ParentBased) records neither the handler's spans nor any process span.
    expect(spansNamed(`process ${topic}`)).toEqual([]);
    expect(spansNamed('inner')).toEqual([]);
  });

  it('ends the span of a handler that times out at its timeout, with the timeout error', async () => {
    expectLogs(/failed on attempt|timed out/, /went to the dead letters/);
    const queue = await fx.service({ tracing: true });
    const topic = uniqueTopic();
    const done = settled(queue, topic, 1);
    // A handler that never settles (and ignores its signal).
    const consumer = queue.consume(topic, () => new Promise<void>(() => undefined), { timeoutMs: 50, maxAttempts: 1 });
    await queue.push(topic, 'x');
    await done;
    const [span] = spansNamed(`process ${topic}`);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('HandlerTimeoutError');
    await consumer.close(0);
  });

  it('with batchSpans, runs the handlers of a reserved batch in one span linked to each message and its push', async () => {
    expectLogs(/failed on attempt/, /went to the dead letters/);
    const queue = await fx.service({ tracing: { batchSpans: true } });
    const topic = uniqueTopic();
    await pushInTwoTraces(queue, topic);
    const done = settled(queue, topic, 4);
    const active = new Set<string | undefined>();
    const consumer = queue.consume(
      topic,
      (payload) => {
        active.add(trace.getActiveSpan()?.spanContext().spanId);
        if (payload === 'second-2') throw new TypeError('handler broke');
      },
      // Room for all 4 in one reserve: however slow the machine, the first takes every ready one.
      { maxAttempts: 1, concurrency: 4 },
    );
    await done;
    await consumer.close();
    const spans = spansNamed(`process ${topic}`);
    // The reserves decide the batches: fewer spans than messages, one link per message in all.
    expect(spans.length).toBeLessThan(4);
    expect(new Set(spans.map((s) => s.spanContext().spanId))).toEqual(active);
    const links = spans.flatMap((s) => s.links);
    expect(links).toHaveLength(4);
    const sends = spansNamed(`send ${topic}`).map((s) => s.spanContext().spanId);
    expect(links.map((l) => sends.indexOf(l.context.spanId)).sort()).toEqual([0, 0, 1, 1]);
    for (const link of links) expect(link.attributes?.['messaging.redis_ack_queue.attempt']).toBe(1);
    for (const span of spans) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(parentOf(span)).toBeUndefined();
      const failedOne = span.status.code === SpanStatusCode.ERROR ? { 'error.type': 'TypeError' } : {};
      expect(span.attributes).toEqual({
        'messaging.system': 'redis-ack-queue',
        'messaging.destination.name': topic,
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.batch.message_count': span.links.length,
        ...failedOne,
      });
    }
    const failed = spans.filter((s) => s.status.code === SpanStatusCode.ERROR);
    expect(failed).toHaveLength(1);
    expect(failed[0].events.map((e) => e.attributes?.['exception.message'])).toEqual(['handler broke']);
  });

  it('adds nothing when tracing is off, and refuses a tracing option that is not a boolean', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await trace.getTracer('app').startActiveSpan('request', async (span) => {
      await queue.push(topic, 'x');
      span.end();
    });
    const [message] = await queue.reserve(topic);
    expect(message.headers).toEqual({});
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['request']);
    expect(() => new RedisAckQueueService({ tracing: 'yes' as never })).toThrow(InvalidOptionError);
    expect(() => new RedisAckQueueService({ tracing: { batchSpans: 1 } as never })).toThrow(InvalidOptionError);
    expect(() => new RedisAckQueueService({ tracing: { batch: true } as never })).toThrow(InvalidOptionError);
  });
});
