import type { Command } from 'commander';
import type { QueueStats } from '../interfaces';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { printJson, printTable } from './output';
import type { CommandRunner } from './program-parts';

const REFRESH_MS = 1000;

/** `stats [topic] [--watch]`: counts of one topic, or of every registered topic. */
export function statsCommand(program: Command, run: CommandRunner): void {
  program
    .command('stats [topic]')
    .description('counts by state of a topic, or of every registered topic (flow parents as waiting-children)')
    .option('--watch', 'refresh every second until Ctrl-C')
    .action(
      run(async (ctx, topic: string | undefined, options: { watch?: boolean }) => {
        if (!options.watch) return showStats(ctx, topic);
        await watch(ctx, topic);
      }),
    );
}

/** What the CLI says when the prefix has no registered topic: the prefix, as a wrong --prefix is the usual cause. */
export const noTopics = (ctx: CliContext) => `No topics registered under prefix "${ctx.options.prefix}".`;

async function showStats(ctx: CliContext, topic: string | undefined, clear = false): Promise<void> {
  const topics = topic === undefined ? await (await ctx.queue()).topics() : [topic];
  const rows = [];
  for (const name of topics) rows.push({ topic: name, ...(await ctx.onTopic(name, (queue) => queue.stats(name))) });
  if (topic !== undefined) await refuseUnknown(ctx, topic, rows[0]);
  if (clear) ctx.io.out('\x1b[2J\x1b[H');
  if (ctx.options.json) return printJson(ctx.io, topic === undefined ? rows : rows[0]);
  // Waiting children only where flow parents wait, and last: the columns before it, read by
  // position, stay as they were.
  const waiting = rows.some((row) => row.waitingChildren !== undefined);
  printTable(
    ctx.io,
    rows.map((row) => ({ ...row, 'waiting-children': row.waitingChildren ?? 0 })),
    ['topic', 'ready', 'delayed', 'leased', 'dead', 'paused', ...(waiting ? ['waiting-children'] : [])],
    noTopics(ctx),
  );
}

/**
 * Zeros for a topic the prefix never saw would read as "all done": a topic neither registered nor
 * holding anything is not found (exit 3). One that holds messages is shown, registered or not
 * (a topic forgotten, or used only by releases older than the registry).
 */
async function refuseUnknown(ctx: CliContext, topic: string, counts: QueueStats): Promise<void> {
  const { ready, delayed, leased, dead, waitingChildren } = counts;
  if (ready + delayed + leased + dead + (waitingChildren ?? 0) > 0 || counts.paused) return;
  if ((await (await ctx.queue()).topics()).includes(topic)) return;
  throw new CliFailure(
    `no topic "${topic}" under prefix "${ctx.options.prefix}": nothing registered it and it holds no messages ` +
      '(check the name and --prefix; `topics` lists the registered ones)',
    EXIT.notFound,
  );
}

/** Shows the stats every second until SIGINT (Ctrl-C) or SIGTERM, then ends with exit 0. */
async function watch(ctx: CliContext, topic: string | undefined): Promise<void> {
  let stopped = false;
  let wakeUp: () => void = () => undefined;
  const stop = () => {
    stopped = true;
    wakeUp();
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    while (!stopped) {
      await showStats(ctx, topic, ctx.io.interactive && !ctx.options.json);
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        setTimeout(resolve, REFRESH_MS);
      });
    }
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
  }
}
