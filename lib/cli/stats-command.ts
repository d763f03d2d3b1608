import type { Command } from 'commander';
import type { CliContext } from './cli-context';
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

async function showStats(ctx: CliContext, topic: string | undefined, clear = false): Promise<void> {
  const topics = topic === undefined ? await (await ctx.queue()).topics() : [topic];
  const rows = [];
  for (const name of topics) rows.push({ topic: name, ...(await ctx.onTopic(name, (queue) => queue.stats(name))) });
  if (clear) ctx.io.out('\x1b[2J\x1b[H');
  if (ctx.options.json) return printJson(ctx.io, topic === undefined ? rows : rows[0]);
  // Waiting children only where flow parents wait, and last: the columns before it, read by
  // position, stay as they were.
  const waiting = rows.some((row) => row.waitingChildren !== undefined);
  printTable(
    ctx.io,
    rows.map((row) => ({ ...row, 'waiting-children': row.waitingChildren ?? 0 })),
    ['topic', 'ready', 'delayed', 'leased', 'dead', 'paused', ...(waiting ? ['waiting-children'] : [])],
    'No topics registered.',
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
