import type { Command } from 'commander';
import { bulkProblem, bulkRequestOf, type BulkNames, type BulkRequest } from '../common/bulk-request';
import type { BulkStatus } from '../interfaces';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { timeOf } from './history-command';
import { printJson, printLine, printRecord, time } from './output';
import { integer, type CommandRunner } from './program-parts';

/** The options of `bulk`, as commander gives them. */
interface BulkOptions {
  state?: string;
  tag?: string;
  from?: string;
  to?: string;
  errorContains?: string;
  maxPerSecond?: number;
  dryRun?: boolean;
  wait?: boolean;
}

/** How often `--wait` reads where the bulk action stands (ms). */
const WAIT_POLL_MS = 250;

const NAMES: BulkNames = {
  action: '<action>',
  state: '--state',
  tag: '--tag',
  from: '--from',
  to: '--to',
  errorContains: '--error-contains',
  maxPerSecond: '--max-per-second',
};

/** What the question and the output call each action. */
const VERBS = { requeue: 'Requeue', cancel: 'Cancel', purge: 'Purge', replay: 'Replay' } as const;

/** `bulk`, `bulk-status` and `bulk-abort`: acting on every message a filter selects, as a job that outlives the CLI. */
export function addBulkCommands(program: Command, run: CommandRunner): void {
  program
    .command('bulk <topic> <action>')
    .description(
      'requeue, cancel, purge or replay every message of a state that a filter selects, in the background ' +
        '(--dry-run counts them and changes nothing)',
    )
    .option(
      '--state <state>',
      'the state selected: dead (default), completed, ready, delayed, leased, waiting-children',
    )
    .option('--tag <tag>', 'only messages pushed with this tag')
    .option('--from <time>', 'only messages pushed at or after: ISO 8601 time or epoch ms')
    .option('--to <time>', 'only messages pushed at or before: ISO 8601 time or epoch ms')
    .option('--error-contains <text>', "only dead letters whose last error's text contains this")
    .option('--max-per-second <n>', 'the most messages acted on per second (default 50000)', integer)
    .option('--dry-run', 'print how many messages it would select, and change nothing')
    .option('--wait', 'stay until it ends (running it from here), then print where it ended')
    .action(
      run(async (ctx, topic: string, action: string, options: BulkOptions) =>
        startBulk(ctx, topic, requestOf(action, options), options),
      ),
    );
  program
    .command('bulk-status <id>')
    .description('where a bulk action stands: running, done or aborted, and how far (exit 3 when there is none)')
    .action(run(async (ctx, id: string) => showStatus(ctx, id)));
  program
    .command('bulk-abort <id>')
    .description('stop a running bulk action: what it did stays done (exit 3 when there is none)')
    .action(run(async (ctx, id: string) => abort(ctx, id)));
}

/** The checked bulk action of the arguments; a usage failure (exit 2) when one is wrong. */
function requestOf(action: string, options: BulkOptions): BulkRequest {
  const fields = {
    action,
    state: options.state,
    tag: options.tag,
    from: timeOf(options.from, NAMES.from),
    to: timeOf(options.to, NAMES.to),
    errorContains: options.errorContains,
    maxPerSecond: options.maxPerSecond,
  };
  const problem = bulkProblem(fields, NAMES);
  if (problem) throw new CliFailure(problem, EXIT.usage);
  return bulkRequestOf(fields);
}

async function startBulk(ctx: CliContext, topic: string, request: BulkRequest, options: BulkOptions): Promise<void> {
  const dryRun = options.dryRun === true;
  const { state, ...filter } = request.filter;
  const selected = await ctx.onTopic(topic, (queue) => queue.count(topic, state, filter));
  const what = (n: number) => `${n} ${state} message${n === 1 ? '' : 's'} of ${topic}`;
  const verb = VERBS[request.action];
  if (dryRun || selected === 0) {
    if (ctx.options.json) return printJson(ctx.io, { topic, action: request.action, state, selected, dryRun });
    return printLine(ctx.io, dryRun ? `Would ${request.action} ${what(selected)}.` : `No ${what(0)}: nothing to do.`);
  }
  if (!(await ctx.confirm(`${verb} ${what(selected)}?`))) return;
  const started = await ctx.onTopic(topic, (queue) => queue.bulk(topic, request));
  if (options.wait) return printStatus(ctx, await ended(ctx, started.id));
  if (ctx.options.json) return printJson(ctx.io, { topic, action: request.action, state, ...started });
  printLine(
    ctx.io,
    `Started bulk action ${started.id}: ${request.action} ${what(started.selected)} (bulk-status ${started.id}).`,
  );
}

/** The bulk action's status, or exit 3. */
async function statusOf(ctx: CliContext, id: string): Promise<BulkStatus> {
  const status = await (await ctx.queue()).bulkStatus(id);
  if (!status) throw new CliFailure(`no bulk action ${id}`, EXIT.notFound);
  // Read through its topic, whose partition count the CLI learns there: progress is kept per partition.
  return (await ctx.onTopic(status.topic, (queue) => queue.bulkStatus(id))) ?? status;
}

/**
 * The bulk action's status once it is no longer running. This process' service started it, so
 * it runs it meanwhile (another service of the prefix takes it over if this one dies).
 */
async function ended(ctx: CliContext, id: string): Promise<BulkStatus> {
  for (;;) {
    const status = await statusOf(ctx, id);
    if (status.state !== 'running') return status;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

async function showStatus(ctx: CliContext, id: string): Promise<void> {
  printStatus(ctx, await statusOf(ctx, id));
}

function printStatus(ctx: CliContext, status: BulkStatus): void {
  if (ctx.options.json) return printJson(ctx.io, status);
  printRecord(ctx.io, { ...status, createdAt: time(status.createdAt) });
}

async function abort(ctx: CliContext, id: string): Promise<void> {
  const { topic } = await statusOf(ctx, id);
  const aborted = await ctx.onTopic(topic, (queue) => queue.abortBulk(id));
  // Not running: done, or aborted already.
  const state = aborted ? 'aborted' : (await statusOf(ctx, id)).state;
  if (ctx.options.json) return printJson(ctx.io, { id, aborted, state });
  printLine(ctx.io, aborted ? `Aborted bulk action ${id}.` : `Bulk action ${id} was not running: it is ${state}.`);
}
