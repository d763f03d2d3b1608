// Consume throughput with metrics and tracing off, and with both on (prom-client metrics fed by
// the delivery tally, OpenTelemetry spans through a real SDK provider whose batch processor
// exports to nowhere). Rounds interleave the modes on one private redis-server; prints the medians.
// Run: npm run bench:observability [-- --messages=20000 --rounds=5 --handler-ms=0 --sample=1]
// --handler-ms: each handler awaits a timer of that many ms (0: it resolves at once, the worst
// case for any per-message cost); --sample: the share of traces the SDK records (ParentBased over
// TraceIdRatioBased; 1 records every one).
// --modes: off, metrics, tracing, on (both), batch (both, tracing with batchSpans).
// --targets: instead, the four cases of issue 24 in one run, each round interleaving them with
// their baselines (off with the same handler), and prints each case's ratio against its target
// (and, without a target, batch spans with a no-op handler, and history recording on against off);
// writes bench/results/observability.md.
import {
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type SpanKind,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { RedisAckQueueMetrics, RedisAckQueueService } from '../lib';
import { BenchRedis } from './redis-server';
import { cpuModel, libVersion } from './machine';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const MESSAGES = arg('messages', 20_000);
const ROUNDS = arg('rounds', 5);
const CONCURRENCY = 16;
const HANDLER_MS = arg('handler-ms', 0);
const SAMPLE = arg('sample', 1);
const TARGETS = process.argv.includes('--targets');
type Mode = 'off' | 'metrics' | 'tracing' | 'on' | 'batch';
const MODES = (process.argv.find((a) => a.startsWith('--modes='))?.split('=')[1] ?? 'off,on').split(',') as Mode[];

/** One measured setting: what is on, the handler's wait and the sampled share. */
interface Case {
  name: string;
  mode: Mode;
  handlerMs: number;
  sample: number;
  /** The service's history option (default on, as in an app). */
  history?: boolean;
}

const nowhere: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: () => Promise.resolve() };
/** The root sampler of the case running now (cases of one run may sample differently). */
let ratio: Sampler = new TraceIdRatioBasedSampler(SAMPLE);
const current: Sampler = {
  shouldSample: (ctx: Context, id: string, name: string, kind: SpanKind, attrs: Attributes, links: Link[]) =>
    ratio.shouldSample(ctx, id, name, kind, attrs, links),
  toString: () => 'bench',
};
const sampler = new ParentBasedSampler({ root: current });
trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(nowhere)] }));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

/** Messages per second consumed, from the first start to the last ack. */
async function round(url: string, { mode, handlerMs, sample, history = true }: Case, n: number): Promise<Figure> {
  ratio = new TraceIdRatioBasedSampler(sample);
  const tracing = mode === 'batch' ? { batchSpans: true } : mode === 'on' || mode === 'tracing';
  const queue = new RedisAckQueueService({ connection: url, tracing, history });
  await queue.connect();
  const withMetrics = mode === 'on' || mode === 'metrics' || mode === 'batch';
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
      if (handlerMs > 0) return new Promise((resolve) => setTimeout(resolve, handlerMs));
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

let redisVersion = '';
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const pct = (value: number) => `${(value * 100).toFixed(1).padStart(6)} %`;

/** Every case, each round in another order, so drift hits every case alike. */
async function measure(cases: Case[]): Promise<Map<string, Figure[]>> {
  const redis = await BenchRedis.start();
  redisVersion = redis.version();
  const figures = new Map<string, Figure[]>(cases.map((c) => [c.name, []]));
  try {
    await round(redis.url, cases[0], -1); // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(i + k) % cases.length];
        figures.get(c.name)!.push(await round(redis.url, c, i));
      }
    }
  } finally {
    await redis.stop();
  }
  return figures;
}

const medians = (values: Figure[]) => ({
  rate: median(values.map((f) => f.rate)),
  cpuUs: median(values.map((f) => f.cpuUs)),
});

async function main(): Promise<void> {
  if (TARGETS) return targets();
  const cases = MODES.map((mode) => ({ name: mode, mode, handlerMs: HANDLER_MS, sample: SAMPLE }));
  const figures = await measure(cases);
  const off = medians(figures.get(MODES[0])!);
  let out =
    `${MESSAGES} messages x ${ROUNDS} rounds, concurrency ${CONCURRENCY}, handler ${HANDLER_MS} ms, ` +
    `sampled ${SAMPLE * 100} %; medians, and against ${MODES[0]}\n`;
  for (const [mode, values] of figures) {
    const { rate, cpuUs } = medians(values);
    out +=
      `${mode.padEnd(8)} ${String(Math.round(rate)).padStart(7)} msg/s ${pct(rate / off.rate)}` +
      `   ${cpuUs.toFixed(1).padStart(6)} µs CPU/msg ${pct(cpuUs / off.cpuUs)}` +
      `  (msg/s: ${values.map((f) => Math.round(f.rate)).join(', ')})\n`;
  }
  process.stdout.write(out);
}

/**
 * The four targets of issue 24 with the two baselines they are measured against, and history
 * recording on against off (the baseline "off" records history, as apps do by default). Prints
 * them and writes bench/results/observability.md.
 */
async function targets(): Promise<void> {
  const cases: Case[] = [
    { name: 'off', mode: 'off', handlerMs: 0, sample: 1 },
    { name: 'metrics', mode: 'metrics', handlerMs: 0, sample: 1 },
    { name: 'on', mode: 'on', handlerMs: 0, sample: 1 },
    { name: 'on 10%', mode: 'on', handlerMs: 0, sample: 0.1 },
    { name: 'off 1ms', mode: 'off', handlerMs: 1, sample: 1 },
    { name: 'on 1ms', mode: 'on', handlerMs: 1, sample: 1 },
    { name: 'batch', mode: 'batch', handlerMs: 0, sample: 1 },
    { name: 'no history', mode: 'off', handlerMs: 0, sample: 1, history: false },
  ];
  const rows: [string, string, string, number][] = [
    ['metrics only, no-op handler', 'metrics', 'off', 0.97],
    ['metrics + tracing, no-op, 100 % sampled', 'on', 'off', 0.75],
    ['metrics + tracing, no-op, 10 % head sampling', 'on 10%', 'off', 0.95],
    ['metrics + tracing, 1 ms handler, 100 % sampled', 'on 1ms', 'off 1ms', 0.92],
    ['metrics + batch spans (opt-in), no-op, 100 % sampled', 'batch', 'off', 0],
    ['history recording on, against off, plain consume+ack', 'off', 'no history', 0],
  ];
  const figures = await measure(cases);
  let out =
    `# Observability: what metrics, tracing and history cost\n\n` +
    `- Date: ${new Date().toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores; Node ${process.version}; ${redisVersion}\n` +
    `- Command: \`npm run bench:observability -- --targets\`. ${MESSAGES} messages consumed per round at concurrency ${CONCURRENCY};\n` +
    `  medians of ${ROUNDS} rounds, each interleaving every case; "off" has metrics and tracing off and history on\n` +
    `  (the default), "no history" has all three off. CPU: this process's CPU time per message.\n\n` +
    `| case | msg/s | CPU µs/msg | msg/s of each round |\n| --- | --- | --- | --- |\n`;
  for (const [name, values] of figures) {
    const { rate, cpuUs } = medians(values);
    out += `| ${name} | ${count(rate)} | ${cpuUs.toFixed(1)} | ${values.map((f) => count(f.rate)).join(', ')} |\n`;
  }
  out += `\n| target | as a share of its baseline | msg/s | CPU/msg | |\n| --- | --- | --- | --- | --- |\n`;
  for (const [label, name, base, target] of rows) {
    const [m, b] = [medians(figures.get(name)!), medians(figures.get(base)!)];
    const met = target === 0 ? '(no target)' : m.rate / b.rate >= target ? 'met' : '**short**';
    const goal =
      target > 0 ? `≥ ${Math.round(target * 100)} %` : name === 'batch' ? 'none (opt-in)' : 'within run-to-run noise';
    out += `| ${label} | ${goal} | ${pct(m.rate / b.rate).trim()} | ${pct(m.cpuUs / b.cpuUs).trim()} | ${met} |\n`;
  }
  process.stdout.write(out);
  const dir = join(__dirname, '..', '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'observability.md'), out);
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

void main();
