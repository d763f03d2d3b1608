import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULT_PREFIX } from '../common/redis-ack-queue.constants';
import { addBulkCommands } from './bulk-commands';
import { CliContext, type GlobalOptions } from './cli-context';
import { processIo, type CliIo } from './cli-io';
import { addControlCommands } from './control-commands';
import { failureOf } from './exit-codes';
import { addInspectCommands } from './inspect-commands';
import { outboxCommand } from './outbox-command';
import { integer, type CommandRunner } from './program-parts';
import { scalingCommand } from './scaling-command';

/** The `redis-ack-queue` program: global options, then one subcommand per operation. */
export function buildProgram(io: CliIo, env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('redis-ack-queue')
    .description(
      'Inspect and operate nestjs-redis-ack-queue topics (exit codes: 0 ok, 1 failure, 2 usage, 3 not found)',
    )
    .version(packageVersion())
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) })
    .addOption(new Option('--url <url>', 'Redis URL: redis://, rediss://, unix:///path or host:port (env REDIS_URL)'))
    .addOption(new Option('--cluster <seeds>', 'Redis Cluster seeds, host:port,host:port (env REDIS_CLUSTER)'))
    .option('--prefix <prefix>', 'key prefix of the queue', DEFAULT_PREFIX)
    .option('--json', 'print machine-readable JSON')
    .option('-y, --yes', 'do not ask before requeue, purge, cancel or bulk')
    .option('--timeout <ms>', 'how long to wait for Redis (ms)', integer, 3000);

  const run: CommandRunner =
    (work) =>
    async (...args) => {
      const command = args[args.length - 1] as Command;
      const ctx = new CliContext(command.optsWithGlobals<GlobalOptions>(), io, env);
      try {
        await work(ctx, ...(args.slice(0, -1) as never[]));
      } finally {
        await ctx.close();
      }
    };
  addInspectCommands(program, run);
  addControlCommands(program, run);
  addBulkCommands(program, run);
  scalingCommand(program, run);
  outboxCommand(program, run);
  return program;
}

/** Runs the CLI on `argv` (process.argv form); resolves with the exit code, having printed any error. */
export async function runCli(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env) {
  try {
    await buildProgram(io, env).parseAsync(argv);
    return 0;
  } catch (error) {
    const { exitCode, line } = failureOf(error);
    if (line) io.err(`${line}\n`);
    return exitCode;
  }
}

/** The installed package's version (dist/cli/ is two levels below package.json). */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
