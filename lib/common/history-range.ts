import type { TopicHistory, TopicHistoryOptions } from '../interfaces';
import { MESSAGES } from './redis-ack-queue.messages';

/** One minute, the step history is kept in (ms). */
export const MINUTE_MS = 60_000;
/** The longest step an operator tool asks for (ms). */
export const MAX_STEP_MS = 24 * 3_600_000;
/** How far back history is kept, so the longest range worth asking for (ms). */
export const MAX_SPAN_MS = 25 * 3_600_000;
/** The most steps one read answers: 25 hours of minutes. */
export const MAX_STEPS = MAX_SPAN_MS / MINUTE_MS;

/** A range of history as the dashboard and the CLI ask for it (`history()`'s options, `stepMs` set). */
export interface HistoryRequest extends TopicHistoryOptions {
  stepMs: number;
}

/** The names the caller gives each field, for its texts (`from` on the API, `--from` on the CLI). */
export type HistoryNames = Record<'from' | 'to' | 'stepMs' | 'lastMs', string>;

/** Why a request cannot be read (a text of MESSAGES), or undefined when it can. */
export function historyProblem(request: HistoryRequest, names: HistoryNames): string | undefined {
  const { from, to, stepMs, lastMs } = request;
  if (!Number.isInteger(stepMs) || stepMs % MINUTE_MS !== 0 || stepMs < MINUTE_MS || stepMs > MAX_STEP_MS) {
    return MESSAGES.historyStep(names.stepMs);
  }
  if (lastMs !== undefined && (!Number.isInteger(lastMs) || lastMs < MINUTE_MS || lastMs > MAX_SPAN_MS)) {
    return MESSAGES.historySpan(names.lastMs);
  }
  if (lastMs !== undefined && from !== undefined) return MESSAGES.historyEither(names.from, names.lastMs);
  if (from !== undefined && to !== undefined && from > to) return MESSAGES.historyOrder(names.from, names.to);
  const span = lastMs ?? (from !== undefined && to !== undefined ? to - from : undefined);
  const steps = span === undefined ? 0 : Math.ceil(span / stepMs);
  return steps > MAX_STEPS ? MESSAGES.historyTooManySteps(steps, MAX_STEPS) : undefined;
}

/** What reads history: the queue service (its public `history()`). */
export interface HistoryReader {
  history(topic: string, options?: TopicHistoryOptions): Promise<TopicHistory>;
}

/** Reads a checked request: one call, "the last `lastMs`" measured on the Redis server's clock. */
export function readHistory(reader: HistoryReader, topic: string, request: HistoryRequest): Promise<TopicHistory> {
  const { from, to, stepMs, lastMs } = request;
  return reader.history(topic, from === undefined ? { to, stepMs, lastMs } : { from, to, stepMs });
}
