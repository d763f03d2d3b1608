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

/**
 * A range of history as the dashboard and the CLI ask for it: `from`/`to` as `history()` takes
 * them, or the `lastMs` before `to` (before now on the Redis server's clock when `to` is left out).
 */
export interface HistoryRequest extends TopicHistoryOptions {
  stepMs: number;
  lastMs?: number;
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

/**
 * Reads a checked request. The last `lastMs` up to now is measured on the Redis server's clock,
 * as history is: the default range (the last hour) says where now is, and a longer span is read
 * again from there; a shorter one is the default range's end.
 */
export async function readHistory(
  reader: HistoryReader,
  topic: string,
  request: HistoryRequest,
): Promise<TopicHistory> {
  const { from, to, stepMs, lastMs } = request;
  if (lastMs === undefined) return reader.history(topic, { from, to, stepMs });
  if (to !== undefined) return reader.history(topic, { from: Math.max(0, to - lastMs + stepMs), to, stepMs });
  const recent = await reader.history(topic, { stepMs });
  const start = recent.to - Math.ceil(lastMs / stepMs) * stepMs;
  if (start >= recent.from) return { ...recent, from: start, points: recent.points.filter((p) => p.at >= start) };
  return reader.history(topic, { from: start, to: recent.to - stepMs, stepMs });
}
