import { InvalidOptionError } from '../errors';
import type { TopicHistory, TopicHistoryOptions, TopicHistoryPoint } from '../interfaces';
import { COUNT_NAMES, MINUTE_MS, MinuteRecord } from '../engine/codecs/history-format';
import type { StoredHistory } from '../engine/stores/history-store';
import type { QueueCore } from './queue-core';
import { checkTimeRange, MAX_SPAN_MS } from './time-range-options';
import { assertTopic } from './validation';

/** Reads a topic's history (what every process recorded, see HistoryRecorder) in steps. */
export class QueueHistory {
  constructor(private readonly core: QueueCore) {}

  history(topic: string, options?: TopicHistoryOptions | null): Promise<TopicHistory> {
    return this.core.call('read history', topic, async () => {
      assertTopic(topic);
      const range = checkHistoryOptions(options);
      return pointsOf(topic, range.stepMs, await this.core.engine.history.read(topic, range));
    });
  }
}

/** A range as the engine reads it. */
interface HistoryRange {
  stepMs: number;
  lastMs: number;
  from?: number;
  to?: number;
}

function checkHistoryOptions(options: TopicHistoryOptions | null | undefined): HistoryRange {
  if (options !== undefined && options !== null && typeof options !== 'object')
    throw new InvalidOptionError('options', options, 'an object { from?, to?, lastMs?, stepMs? }');
  const { stepMs = MINUTE_MS } = options ?? {};
  const { from, to, lastMs } = checkTimeRange(options ?? {});
  if (!wholeMinutes(stepMs)) throw new InvalidOptionError('stepMs', stepMs, MINUTES_EXPECTED);
  return { from, to, stepMs, lastMs };
}

const MINUTES_EXPECTED = `a whole number of minutes in ms, from ${MINUTE_MS} to ${MAX_SPAN_MS}`;
const wholeMinutes = (ms: unknown): ms is number =>
  typeof ms === 'number' && Number.isSafeInteger(ms) && ms % MINUTE_MS === 0 && ms >= MINUTE_MS && ms <= MAX_SPAN_MS;

/** One point per step from `from` to `to`, the minutes of each merged. */
function pointsOf(topic: string, stepMs: number, { from, to, records }: StoredHistory): TopicHistory {
  const steps = new Map<number, MinuteRecord>();
  for (const record of records) {
    const at = record.minute * MINUTE_MS - ((record.minute * MINUTE_MS) % stepMs);
    const step = steps.get(at);
    if (step) step.merge(record);
    else steps.set(at, record);
  }
  const points: TopicHistoryPoint[] = [];
  for (let at = from; at <= to; at += stepMs) {
    const step = steps.get(at) ?? new MinuteRecord(at / MINUTE_MS);
    const point = { at } as TopicHistoryPoint;
    for (const name of COUNT_NAMES) point[name] = step[name];
    point.expired = step.expired;
    point.wait = step.wait.times();
    point.handling = step.handling.times();
    points.push(point);
  }
  return { topic, from, to: points.length > 0 ? to + stepMs : from, stepMs, points };
}
