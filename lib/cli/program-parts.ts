import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from './cli-context';

/** Wraps a command's work into a commander action: one context per run, closed afterwards. */
export type CommandRunner = (
  work: (ctx: CliContext, ...args: never[]) => Promise<void>,
) => (...args: unknown[]) => Promise<void>;

/** `--offset` and `--limit` of a paged listing. */
export interface PageOptions {
  offset?: number;
  limit?: number;
}

/** Adds `--offset` and `--limit` to a listing command. */
export function pageOptions(command: Command): Command {
  return command
    .option('--offset <n>', 'entries to skip', integer, 0)
    .option('--limit <n>', 'entries to show (at most 1000)', integer, 100);
}

/** Parses a non-negative integer option (commander reports a bad one as a usage error). */
export function integer(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError('not a non-negative integer.');
  return Number(text);
}
