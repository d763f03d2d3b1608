import type { Command } from 'commander';
import { MAX_SPAN_MS, MINUTE_MS } from '../common/history-range';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { GroupUsageOptions, GroupUsageRow } from '../interfaces';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { durationOf, timeOf } from './history-command';
import { printJson, printLine, printTable } from './output';
import type { CommandRunner } from './program-parts';

/** The options of `usage`, as commander gives them (text). */
interface UsageOptions {
  from?: string;
  to?: string;
  last?: string;
  top: string;
}

const MAX_TOP = 1_000;
const COLUMNS = ['group', 'handled', 'failed', 'retried', 'dead', 'handler time'];

/** `usage <topic>`: the groups that used a topic most (handler time), from what Redis keeps for 25 hours. */
export function usageCommand(program: Command, run: CommandRunner): void {
  program
    .command('usage <topic>')
    .description('the groups of a topic with the most handler time: handled, failed, retried, dead (kept 25 hours)')
    .option('--top <n>', `how many groups, 1 to ${MAX_TOP}`, '10')
    .option('--from <time>', 'start: ISO 8601 time or epoch ms (default: --last before --to)')
    .option('--to <time>', 'end, its minute included: ISO 8601 time or epoch ms (default: now)')
    .option('--last <duration>', 'the span that ends at --to: 30m, 1h, 24h or ms (default 1h)')
    .action(run(async (ctx, topic: string, options: UsageOptions) => showUsage(ctx, topic, requestOf(options))));
}

/** The checked options; a usage failure (exit 2) when one is wrong. */
function requestOf(options: UsageOptions): GroupUsageOptions {
  const from = timeOf(options.from, '--from');
  const to = timeOf(options.to, '--to');
  const lastMs = durationOf(options.last, MESSAGES.historySpan('--last'));
  const top = /^\d{1,4}$/.test(options.top) ? Number(options.top) : NaN;
  if (!(top >= 1 && top <= MAX_TOP)) throw new CliFailure(MESSAGES.usageTop('--top', MAX_TOP), EXIT.usage);
  if (lastMs !== undefined && (lastMs < MINUTE_MS || lastMs > MAX_SPAN_MS))
    throw new CliFailure(MESSAGES.historySpan('--last'), EXIT.usage);
  if (lastMs !== undefined && from !== undefined)
    throw new CliFailure(MESSAGES.historyEither('--from', '--last'), EXIT.usage);
  if (from !== undefined && to !== undefined && from > to)
    throw new CliFailure(MESSAGES.historyOrder('--from', '--to'), EXIT.usage);
  return { top, ...(from !== undefined && { from }), ...(to !== undefined && { to }), ...(lastMs && { lastMs }) };
}

async function showUsage(ctx: CliContext, topic: string, options: GroupUsageOptions): Promise<void> {
  const usage = await ctx.onTopic(topic, (queue) => queue.groupUsage(topic, options));
  if (ctx.options.json) return printJson(ctx.io, usage);
  printTable(ctx.io, usage.groups.map(rowOf), COLUMNS, `No group of ${topic} used anything in this range.`);
  const range = `${minuteOf(usage.from)} to ${minuteOf(usage.to)}`;
  if (usage.groups.length > 0) printLine(ctx.io, `${usage.groups.length} of ${usage.groupCount} groups, ${range}`);
}

/** A group's totals as a row: its handler time in seconds to a tenth. */
function rowOf(row: GroupUsageRow): Record<string, unknown> {
  return { ...row, 'handler time': `${(row.handlerMs / 1_000).toFixed(1)} s` };
}

const minuteOf = (ms: number) => `${new Date(ms).toISOString().slice(0, 16)}Z`;
