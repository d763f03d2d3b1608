// Consume throughput with metrics and tracing off, and with both on (prom-client metrics fed by
// events$, OpenTelemetry spans through a real SDK provider whose batch processor exports to
// nowhere). Rounds interleave the two modes on one private redis-server; prints the medians.
// Run: npm run bench:observability [-- --messages=20000 --rounds=5 --handler-ms=0 --sample=1]
// --handler-ms: each handler awaits a timer of that many ms (0: it resolves at once, the worst
// case for any per-message cost); --sample: the share of traces the SDK records (ParentBased over
// TraceIdRatioBased; 1 records every one).
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { RedisAckQueueMetrics, RedisAckQueueService } from '../lib';
import { BenchRedis } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const MESSAGES = arg('messages', 20_000);
const ROUNDS = arg('rounds', 5);
const CONCURRENCY = 16;
const HANDLER_MS = arg('handler-ms', 0);
const SAMPLE = arg('sample', 1);
type Mode = 'off' | 'metrics' | 'tracing' | 'on';
const MODES = (process.argv.find((a) => a.startsWith('--modes='))?.split('=')[1] ?? 'off,on').split(',') as Mode[];

const nowhere: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: () => Promise.resolve() };
const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(SAMPLE) });
trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(nowhere)] }));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

/** Messages per second consumed, from the first start to the last ack. */
async function round(url: string, mode: Mode, n: number): Promise<Figure> {
  const queue = new RedisAckQueueService({ connection: url, tracing: mode === 'on' || mode === 'tracing' });
  await queue.connect();
  const withMetrics = mode === 'on' || mode === 'metrics';
  const metrics = withMetrics ? new RedisAckQueueMetrics(queue, { registry: new Registry() }) : undefined;
  const topic = `bench.${mode}.${n}.${Date.now()}`;
  for (let i = 0; i < MESSAGES; i += 1000) {
    await queue.pushMany(
      topic,
      Array.from({ length: Math.min(1000, MESSAGES - i) }, (_, j) => ({ payload: { n: i + j } })),
    );
  }
  let handled = 0;
  let started = 0;
  let cpu = process.cpuUsage();
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const consumer = queue.consume(
    topic,
    () => {
      if (handled === 0) {
        started = performance.now();
        cpu = process.cpuUsage();
      }
      if (++handled === MESSAGES) finished();
      if (HANDLER_MS > 0) return new Promise((resolve) => setTimeout(resolve, HANDLER_MS));
    },
    { concurrency: CONCURRENCY },
  );
  await all;
  await queue.waitUntilIdle(topic);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await consumer.close();
  metrics?.close();
  await queue.close();
  return { rate: MESSAGES / seconds, cpuUs: (used.user + used.system) / MESSAGES };
}

/** Messages per second, and this process's CPU time per message (µs): steadier on a busy machine. */
interface Figure {
  rate: number;
  cpuUs: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const figures = new Map<Mode, Figure[]>(MODES.map((mode) => [mode, []]));
  try {
    await round(redis.url, 'off', -1); // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      // Interleaved, each round in another order, so drift hits every mode alike.
      for (let k = 0; k < MODES.length; k++) {
        const mode = MODES[(i + k) % MODES.length];
        figures.get(mode)!.push(await round(redis.url, mode, i));
      }
    }
  } finally {
    await redis.stop();
  }
  const base = figures.get(MODES[0])!;
  const [offRate, offCpu] = [median(base.map((f) => f.rate)), median(base.map((f) => f.cpuUs))];
  let out =
    `${MESSAGES} messages x ${ROUNDS} rounds, concurrency ${CONCURRENCY}, handler ${HANDLER_MS} ms, ` +
    `sampled ${SAMPLE * 100} %; medians, and against ${MODES[0]}\n`;
  for (const [mode, values] of figures) {
    const [rate, cpu] = [median(values.map((f) => f.rate)), median(values.map((f) => f.cpuUs))];
    out +=
      `${mode.padEnd(8)} ${String(Math.round(rate)).padStart(7)} msg/s ${((rate / offRate) * 100).toFixed(1).padStart(6)} %` +
      `   ${cpu.toFixed(1).padStart(6)} µs CPU/msg ${((cpu / offCpu) * 100).toFixed(1).padStart(6)} %` +
      `  (msg/s: ${values.map((f) => Math.round(f.rate)).join(', ')})\n`;
  }
  process.stdout.write(out);
}

void main();
