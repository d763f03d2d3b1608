import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { trace } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { RedisAckQueueMetrics } from '../../lib';
import {
  RedisAckQueueClient,
  type RedisAckQueueContext,
  RedisAckQueueServer,
  topicOfPattern,
} from '../../lib/microservices';
import { useInMemoryTracing } from '../support/in-memory-tracing';
import { useRedis } from '../support/queue-fixture';

const traceIds: string[] = [];

@Controller()
class TracedHandlers {
  @EventPattern<string>('traced.event')
  onEvent(@Payload() _data: unknown, @Ctx() _context: RedisAckQueueContext) {
    traceIds.push(trace.getActiveSpan()?.spanContext().traceId ?? 'none');
  }

  @MessagePattern({ cmd: 'traced' })
  onRequest(@Payload() n: number, @Ctx() context: RedisAckQueueContext) {
    traceIds.push(trace.getActiveSpan()?.spanContext().traceId ?? 'none');
    return { n, traceparent: context.headers.traceparent !== undefined };
  }
}

@Module({ controllers: [TracedHandlers] })
class TracedModule {}

/** The transport's topics are ordinary topics: traced from the caller into the handler, counted by metrics and history. */
describe('the microservice transport, observed', () => {
  const fx = useRedis();
  const { exporter } = useInMemoryTracing();
  let app: INestMicroservice;
  let client: RedisAckQueueClient;
  let server: RedisAckQueueServer;
  let metrics: RedisAckQueueMetrics;
  const registry = new Registry();

  beforeAll(async () => {
    server = new RedisAckQueueServer({ connection: fx.connection, tracing: true });
    app = await NestFactory.createMicroservice(TracedModule, { strategy: server, logger: false });
    await app.listen();
    metrics = new RedisAckQueueMetrics(server.unwrap(), { registry });
    client = new RedisAckQueueClient({ connection: fx.connection, tracing: true });
    fx.closers.push(
      () => app.close(),
      () => client.close(),
      () => Promise.resolve(metrics.close()),
    );
  });

  it("continues the caller's trace in the handler, for events and requests", async () => {
    const tracer = trace.getTracer('app');
    const requestTrace = await tracer.startActiveSpan('http request', async (span) => {
      await lastValueFrom(client.emit('traced.event', { n: 1 }));
      const reply = await firstValueFrom(client.send<{ n: number; traceparent: boolean }>({ cmd: 'traced' }, 2));
      expect(reply).toEqual({ n: 2, traceparent: true });
      span.end();
      return span.spanContext().traceId;
    });
    await server.unwrap().waitUntilIdle('traced.event');
    expect(traceIds).toEqual([requestTrace, requestTrace]);
    const names = exporter.getFinishedSpans().map((span) => span.name);
    expect(names).toEqual(expect.arrayContaining(['send traced.event', 'process traced.event']));
    expect(names).toContain(`process ${topicOfPattern({ cmd: 'traced' })}`);
  });

  it('counts the messages of its topics in metrics and history', async () => {
    const queue = server.unwrap();
    await queue.waitUntilIdle(topicOfPattern({ cmd: 'traced' }));
    const text = await registry.metrics();
    expect(text).toMatch(new RegExp(`redis_ack_queue_acked_total\\{topic="${topicOfPattern({ cmd: 'traced' })}"\\} 1`));
    expect(text).toMatch(/redis_ack_queue_acked_total\{topic="traced.event"\} 1/);
    await app.close();
    const history = await (await fx.service()).history('traced.event');
    expect(history.points.reduce((sum, point) => sum + point.acked, 0)).toBe(1);
  });
});
