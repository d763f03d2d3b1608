import type { Command } from 'commander';
import { historyProblem, readHistory, type HistoryNames, type HistoryRequest } from '../common/history-range';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { HistoryTimes, TopicHistoryPoint } from '../interfaces';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { printJson, printTable } from './output';
import type { CommandRunner } from './program-parts';

/** The options of `history`, as commander gives them (text). */
interface HistoryOptions {
  from?: string;
  to?: string;
  last?: string;
  step: string;
}

const NAMES: HistoryNames = { from: '--from', to: '--to', stepMs: '--step', lastMs: '--last' };
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const COLUMNS = ['time', 'pushed', 'acked', 'retried', 'dead', 'cancelled'];
const TIMES = ['wait', 'handling'] as const;
const PERCENTILES = ['p50', 'p95', 'p99'] as const;

/** `history <topic>`: what happened to a topic, a row per step, from the history Redis keeps for 25 hours. */
export function historyCommand(program: Command, run: CommandRunner): void {
  program
    .command('history <topic>')
    .description('counts and wait/handling percentiles of a topic, a row per step (kept 25 hours)')
    .option('--from <time>', 'start: ISO 8601 time or epoch ms (default: --last before --to)')
    .option('--to <time>', 'end, its step included: ISO 8601 time or epoch ms (default: now)')
    .option('--last <duration>', 'the span that ends at --to: 30m, 1h, 24h or ms (default 1h)')
    .option('--step <duration>', 'the width of a row, whole minutes: 1m, 15m, 1h or ms', '1m')
    .action(run(async (ctx, topic: string, options: HistoryOptions) => showHistory(ctx, topic, requestOf(options))));
}

/** The checked range of the options; a usage failure (exit 2) when one is wrong. */
export function requestOf(options: HistoryOptions): HistoryRequest {
  const request: HistoryRequest = {
    from: timeOf(options.from, NAMES.from),
    to: timeOf(options.to, NAMES.to),
    stepMs: durationOf(options.step, MESSAGES.historyStep(NAMES.stepMs))!,
    lastMs: durationOf(options.last, MESSAGES.historySpan(NAMES.lastMs)),
  };
  const problem = historyProblem(request, NAMES);
  if (problem) throw new CliFailure(problem, EXIT.usage);
  return request;
}

/** Epoch ms, or an ISO 8601 date or date-time (UTC unless it names a zone). */
export function timeOf(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  // JavaScript reads a date-time without a zone as local time: the CLI reads it as UTC, as it prints.
  const zoned = /T.*(Z|[+-]\d\d(:?\d\d)?)$/i.test(text) || !text.includes('T') ? text : `${text}Z`;
  const ms = /^\d{1,16}$/.test(text) ? Number(text) : /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(zoned) : NaN;
  if (!Number.isSafeInteger(ms) || ms < 0) throw new CliFailure(MESSAGES.historyTime(name), EXIT.usage);
  return ms;
}

/** `15m`, `1h`, `90s`, `1d` or ms (`60000`). */
export function durationOf(text: string | undefined, problem: string): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d{1,12})(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new CliFailure(problem, EXIT.usage);
  return Number(match[1]) * UNIT_MS[match[2] ?? 'ms'];
}

async function showHistory(ctx: CliContext, topic: string, request: HistoryRequest): Promise<void> {
  const history = await ctx.onTopic(topic, (queue) => readHistory(queue, topic, request));
  if (ctx.options.json) return printJson(ctx.io, history);
  const columns = [...COLUMNS, ...TIMES.flatMap((times) => PERCENTILES.map((p) => `${times} ${p}`))];
  printTable(ctx.io, history.points.map(rowOf), columns, `No history of ${topic}.`);
}

/** A point as a row: its time to the minute (UTC), counts, and times in ms. */
function rowOf(point: TopicHistoryPoint): Record<string, unknown> {
  const row: Record<string, unknown> = { ...point, time: `${new Date(point.at).toISOString().slice(0, 16)}Z` };
  for (const times of TIMES) {
    for (const p of PERCENTILES) row[`${times} ${p}`] = millis(point[times], p);
  }
  return row;
}

/** A percentile in ms, to a tenth below 10 ms (undefined, printed `-`, when nothing was timed). */
function millis(times: HistoryTimes, p: (typeof PERCENTILES)[number]): string | undefined {
  const ms = times[p];
  if (ms === undefined) return undefined;
  return String(ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms));
}
