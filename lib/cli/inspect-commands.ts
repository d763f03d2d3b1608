import type { Command } from 'commander';
import type { MessageInfo, MessageState, SealedValueInfo } from '../interfaces';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { printJson, printLine, printRecord, printTable, sealedText, shortJson, time } from './output';
import {
  filterOf,
  filterOptions,
  pageOptions,
  type CommandRunner,
  type FilterOptions,
  type PageOptions,
} from './program-parts';
import { childCounts, flowCommand, printChildren } from './flow-command';
import { historyCommand } from './history-command';
import { noTopics, statsCommand } from './stats-command';
import { usageCommand } from './usage-command';

/** Read-only commands: topics, stats, history, usage, list, count, get, flow, dead, schedules. */
export function addInspectCommands(program: Command, run: CommandRunner): void {
  program
    .command('topics')
    .description('list the registered topics of the prefix')
    .action(run(async (ctx) => showTopics(ctx)));

  statsCommand(program, run);
  historyCommand(program, run);
  usageCommand(program, run);

  filterOptions(
    pageOptions(
      program
        .command('list <topic> <state>')
        .description(
          'list messages of a topic in a state: ready, delayed, leased, waiting-children, dead or completed',
        ),
    ),
  ).action(
    run(async (ctx, topic: string, state: string, page: PageOptions & FilterOptions) =>
      listMessages(ctx, topic, state, page),
    ),
  );

  filterOptions(
    program
      .command('count <topic> <state>')
      .description('count the messages of a topic in a state, by --tag, --from, --to and --error-contains'),
  ).action(
    run(async (ctx, topic: string, state: string, filter: FilterOptions) => countMessages(ctx, topic, state, filter)),
  );

  program
    .command('get <topic> <id>')
    .description("show one message, with a flow's parent and children (exit 3 when there is none)")
    .action(run(async (ctx, topic: string, id: string) => getMessage(ctx, topic, id)));

  flowCommand(program, run);

  filterOptions(
    pageOptions(program.command('dead <topic>').description('list the dead letters of a topic, oldest first')),
  ).action(run(async (ctx, topic: string, page: PageOptions & FilterOptions) => listDead(ctx, topic, page)));

  program
    .command('schedules [topic]')
    .description('list the schedules of a topic, or of every topic')
    .action(run(async (ctx, topic: string | undefined) => listSchedules(ctx, topic)));
}

async function showTopics(ctx: CliContext): Promise<void> {
  const topics = await (await ctx.queue()).topics();
  if (ctx.options.json) printJson(ctx.io, topics);
  else if (topics.length === 0) printLine(ctx.io, noTopics(ctx));
  else topics.forEach((topic) => printLine(ctx.io, topic));
}

/** What a message waiting for its key's running one shows for its due time (one word, as a column reads). */
const WAITING_FOR_KEY = 'waiting-for-key';

/** A supersede message that waits for its key's running one to end: delayed, with no due time of its own. */
const waitsForKey = (m: MessageInfo) => m.state === 'delayed' && m.dueAt === undefined && m.mode === 'supersede';

/** The time column of a list by state: what the time means (a dead letter's is when it died, not a due time). */
const TIME_COLUMN: Partial<Record<string, string>> = { leased: 'lease-ends', dead: 'died', completed: 'completed' };

async function listMessages(
  ctx: CliContext,
  topic: string,
  state: string,
  options: PageOptions & FilterOptions,
): Promise<void> {
  const { offset, limit } = options;
  const filter = filterOf(options);
  const messages = await ctx.onTopic(topic, (queue) =>
    queue.list(topic, state as MessageState, { offset, limit, ...filter }),
  );
  if (ctx.options.json) return printJson(ctx.io, messages);
  const timeColumn = TIME_COLUMN[state] ?? 'due';
  const rows = messages.map((m) => ({
    id: m.id,
    attempt: m.attempt,
    enqueued: time(m.enqueuedAt),
    [timeColumn]: waitsForKey(m) ? WAITING_FOR_KEY : time(m.dueAt ?? m.leaseDeadline ?? m.deadAt ?? m.completedAt),
    priority: m.priority,
    tags: m.tags?.join(','),
    mode: m.mode,
    key: m.key,
    sealed: sealedColumn(m),
    ...deadlineOf(m),
  }));
  // Tags, mode and key only when a listed message has them; the key last, as it may hold spaces.
  const tagged = messages.some((m) => m.tags !== undefined) ? ['tags'] : [];
  const keyed = messages.some((m) => m.key !== undefined) ? ['mode', 'key'] : [];
  // Likewise a start-by deadline and what it becomes after.
  const timed = messages.some((m) => m.startBy !== undefined) ? ['start-by', 'on-expire'] : [];
  const columns = [
    'id',
    'attempt',
    'enqueued',
    timeColumn,
    'priority',
    ...timed,
    ...tagged,
    ...sealedOf(rows),
    ...keyed,
  ];
  const none =
    Object.keys(filter).length > 0 ? `No ${state} messages in ${topic} match.` : `No ${state} messages in ${topic}.`;
  printTable(ctx.io, rows, columns, none);
}

async function countMessages(ctx: CliContext, topic: string, state: string, options: FilterOptions): Promise<void> {
  const count = await ctx.onTopic(topic, (queue) => queue.count(topic, state as MessageState, filterOf(options)));
  if (ctx.options.json) return printJson(ctx.io, { topic, state, count });
  printLine(ctx.io, String(count));
}

/** What a codec sealed of a row (its payload, else its result): size and key id, and why it was not opened here. */
function sealedColumn(m: { sealed?: SealedValueInfo; sealedResult?: SealedValueInfo }): string | undefined {
  const sealed = m.sealed ?? m.sealedResult;
  return sealed && sealedText(sealed);
}

/** A `sealed` column only where a row has one. */
const sealedOf = (rows: { sealed?: string }[]) => (rows.some((row) => row.sealed !== undefined) ? ['sealed'] : []);

/** A row's start-by deadline (ISO) and what it becomes after. */
function deadlineOf(m: MessageInfo): Record<string, string | undefined> {
  return { 'start-by': time(m.startBy), 'on-expire': m.onExpire };
}

async function getMessage(ctx: CliContext, topic: string, id: string): Promise<void> {
  const message = await ctx.onTopic(topic, (queue) => queue.get(topic, id));
  if (!message) throw new CliFailure(`no message ${id} in ${topic}`, EXIT.notFound);
  if (ctx.options.json) return printJson(ctx.io, message);
  const { steps, parent, children, sealed, sealedResult, ...fields } = message;
  printRecord(ctx.io, {
    ...fields,
    // What a codec sealed and this process could not open: its size and key id in its place.
    ...(sealed?.undecodable && { payload: sealedText(sealed), headers: '(sealed with the payload)' }),
    ...(sealedResult?.undecodable && { result: sealedText(sealedResult) }),
    enqueuedAt: time(message.enqueuedAt),
    dueAt: waitsForKey(message) ? WAITING_FOR_KEY : time(message.dueAt),
    leaseDeadline: time(message.leaseDeadline),
    completedAt: time(message.completedAt),
    deadAt: time(message.deadAt),
    startBy: time(message.startBy),
    tags: message.tags?.join(', '),
    // As `get` takes them, so the parent's line can be pasted after `get`.
    parent: parent && `${parent.topic} ${parent.id}`,
    children: children && childCounts(children),
    // One line per durable step: `step <name>: <its result, cut>`.
    ...Object.fromEntries(Object.entries(steps ?? {}).map(([name, value]) => [`step ${name}`, shortJson(value)])),
  });
  if (children && children.length > 0) {
    ctx.io.out('\n');
    printChildren(ctx.io, children);
  }
}

async function listDead(ctx: CliContext, topic: string, options: PageOptions & FilterOptions): Promise<void> {
  const { offset, limit } = options;
  const filter = filterOf(options);
  // A filter is list's (its rows are MessageInfo); without one, the dead letters as before.
  const letters =
    Object.keys(filter).length > 0
      ? await ctx.onTopic(topic, (queue) => queue.list(topic, 'dead', { offset, limit, ...filter }))
      : await ctx.onTopic(topic, (queue) => queue.deadLetters(topic, { offset, limit }));
  if (ctx.options.json) return printJson(ctx.io, letters);
  // The error's first line only (its stack stays in --json and `get`), so each letter is one row.
  const rows = letters.map((l) => ({
    ...l,
    deadAt: time(l.deadAt),
    error: l.error?.split('\n')[0],
    sealed: sealedColumn(l),
  }));
  const columns = ['id', 'attempt', 'reason', 'deadAt', ...sealedOf(rows), 'error'];
  printTable(ctx.io, rows, columns, `No dead letters in ${topic}.`);
}

async function listSchedules(ctx: CliContext, topic: string | undefined): Promise<void> {
  const queue = await ctx.queue();
  const schedules = topic ? await ctx.onTopic(topic, (q) => q.schedules(topic)) : await queue.schedules();
  if (ctx.options.json) return printJson(ctx.io, schedules);
  const rows = schedules.map((s) => ({
    ...s,
    every: s.cron ?? (s.everyMs === undefined ? undefined : `${s.everyMs} ms`),
    next: time(s.nextRunAt),
    last: time(s.lastRunAt),
  }));
  printTable(ctx.io, rows, ['topic', 'name', 'every', 'tz', 'next', 'last'], 'No schedules.');
}
