import { performance } from 'node:perf_hooks';

/** What every benchmark message carries: a sequence number, a send time and padding to ~100 bytes of JSON. */
export interface BenchMessage {
  seq: number;
  /** performance.now() just before the push (latency); 0 when unused. */
  t: number;
  pad: string;
}

export type BenchHandler = (message: BenchMessage) => void;

export interface RunningConsumer {
  /** Stops taking work; running handlers finish first. */
  stop(): Promise<void>;
}

/** One queue system behind the same four operations. Each instance uses a queue name of its own. */
export interface QueueSystem {
  readonly name: string;
  push(message: BenchMessage): Promise<void>;
  /** One batch call where the system has one; `dueAt[i]` (epoch ms, if given) delays message i until then. */
  pushBatch(messages: BenchMessage[], dueAt?: number[]): Promise<void>;
  startConsumer(concurrency: number, handler: BenchHandler): Promise<RunningConsumer>;
  close(): Promise<void>;
}

export type SystemFactory = (url: string, queueName: string) => Promise<QueueSystem>;

const PAD = 'x'.repeat(100);

/** About 100 bytes once JSON-encoded. */
export function message(seq: number, t = 0): BenchMessage {
  const bare = JSON.stringify({ seq, t, pad: '' }).length;
  return { seq, t, pad: PAD.slice(0, Math.max(0, 100 - bare)) };
}

export function messages(from: number, count: number): BenchMessage[] {
  return Array.from({ length: count }, (_, i) => message(from + i));
}

export const now = (): number => performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
