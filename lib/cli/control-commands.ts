import type { Command } from 'commander';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { printJson, printLine } from './output';
import type { CommandRunner } from './program-parts';

type Sweep = 'requeue' | 'purge';

/**
 * Commands that change state: requeue, purge, cancel, remove-schedule (confirmed first), pause,
 * resume, stored-format.
 */
export function addControlCommands(program: Command, run: CommandRunner): void {
  for (const sweep of ['requeue', 'purge'] as const) {
    program
      .command(`${sweep} <topic> [ids...]`)
      .description(`${sweep === 'requeue' ? 'requeue' : 'delete'} dead letters of a topic: the ids given, or --all`)
      .option('--all', 'every dead letter of the topic')
      .action(
        run(async (ctx, topic: string, ids: string[], options: { all?: boolean }) =>
          sweepDead(ctx, sweep, topic, ids, options.all === true),
        ),
      );
  }
  program
    .command('cancel <topic> <id>')
    .description('remove one message wherever it is (exit 3 when there is none)')
    .action(run(async (ctx, topic: string, id: string) => cancel(ctx, topic, id)));
  program
    .command('remove-schedule <topic> <name>')
    .description('delete a schedule and its pending tick (exit 3 when there is none)')
    .action(run(async (ctx, topic: string, name: string) => removeSchedule(ctx, topic, name)));
  for (const paused of [true, false]) {
    program
      .command(`${paused ? 'pause' : 'resume'} <topic>`)
      .description(paused ? 'stop every consumer from leasing messages of a topic' : 'let consumers lease again')
      .action(run(async (ctx, topic: string) => setPaused(ctx, topic, paused)));
  }
  program
    .command('stored-format [format]')
    .description(
      "show how the prefix stores plain messages, or set it: 'compact' once no process of an older release runs, or 'json'",
    )
    .action(run(async (ctx, format: string | undefined) => storedFormat(ctx, format)));
}

async function storedFormat(ctx: CliContext, format: string | undefined): Promise<void> {
  const queue = await ctx.queue();
  if (format !== undefined) {
    if (format !== 'json' && format !== 'compact')
      throw new CliFailure(`stored-format: give 'compact' or 'json', not ${JSON.stringify(format)}`, EXIT.usage);
    await queue.setStoredFormat(format);
  }
  const current = await queue.storedFormat();
  if (ctx.options.json) return printJson(ctx.io, { storedFormat: current });
  printLine(ctx.io, `Stored format: ${current}.`);
}

async function sweepDead(ctx: CliContext, sweep: Sweep, topic: string, ids: string[], all: boolean): Promise<void> {
  if (all === ids.length > 0) throw new CliFailure(`${sweep}: give dead letter ids or --all (not both)`, EXIT.usage);
  const count = all ? (await ctx.onTopic(topic, (queue) => queue.stats(topic))).dead : ids.length;
  const verb = sweep === 'requeue' ? 'Requeue' : 'Purge';
  if (!(await ctx.confirm(`${verb} ${count} dead letter${count === 1 ? '' : 's'} of ${topic}?`))) return;
  const done = await ctx.onTopic(topic, (queue) =>
    sweep === 'requeue'
      ? queue.requeueDead(topic, all ? undefined : ids)
      : queue.purgeDead(topic, all ? undefined : ids),
  );
  if (ctx.options.json) return printJson(ctx.io, { topic, [sweep === 'requeue' ? 'requeued' : 'purged']: done });
  printLine(
    ctx.io,
    `${sweep === 'requeue' ? 'Requeued' : 'Purged'} ${done} dead letter${done === 1 ? '' : 's'} of ${topic}.`,
  );
}

async function cancel(ctx: CliContext, topic: string, id: string): Promise<void> {
  if (!(await ctx.confirm(`Cancel message ${id} of ${topic}?`))) return;
  const state = await ctx.onTopic(topic, (queue) => queue.cancel(topic, id));
  if (!state) throw new CliFailure(`no message ${id} in ${topic}`, EXIT.notFound);
  if (ctx.options.json) return printJson(ctx.io, { topic, id, cancelled: state });
  printLine(ctx.io, `Cancelled ${id} of ${topic} (was ${state}).`);
}

async function removeSchedule(ctx: CliContext, topic: string, name: string): Promise<void> {
  if (!(await ctx.confirm(`Remove schedule ${name} of ${topic}?`))) return;
  const removed = await ctx.onTopic(topic, (queue) => queue.removeSchedule(topic, name));
  if (!removed) throw new CliFailure(`no schedule ${name} in ${topic}`, EXIT.notFound);
  if (ctx.options.json) return printJson(ctx.io, { topic, name, removed });
  ctx.io.out(`Removed schedule ${name} of ${topic}.\n`);
}

async function setPaused(ctx: CliContext, topic: string, paused: boolean): Promise<void> {
  await ctx.onTopic(topic, (queue) => (paused ? queue.pause(topic) : queue.resume(topic)));
  if (ctx.options.json) return printJson(ctx.io, { topic, paused });
  printLine(ctx.io, `${paused ? 'Paused' : 'Resumed'} ${topic}.`);
}
