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

/** `--tag`, `--from`, `--to` and `--error-contains` of a command that lists or counts messages. */
export interface FilterOptions {
  /** `--tag`: messages pushed with this tag. */
  tag?: string;
  /** `--from`: pushed at or after (epoch ms). */
  from?: number;
  /** `--to`: pushed at or before (epoch ms). */
  to?: number;
  /** `--error-contains`: dead letters whose last error text contains this. */
  errorContains?: string;
}

/** Adds the filter options (see MessageFilter) to a command that lists or counts messages. */
export function filterOptions(command: Command): Command {
  return command
    .option('--tag <tag>', 'only messages pushed with this tag')
    .option('--from <time>', 'only messages pushed at or after this time (ISO 8601 or epoch ms)', moment)
    .option('--to <time>', 'only messages pushed at or before this time (ISO 8601 or epoch ms)', moment)
    .option('--error-contains <text>', "only dead letters whose last error's text contains this");
}

/** The filter a command's options give (none given: an empty filter). */
export function filterOf({ tag, from, to, errorContains }: FilterOptions): FilterOptions {
  return {
    ...(tag !== undefined && { tag }),
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
    ...(errorContains !== undefined && { errorContains }),
  };
}

/** Parses a moment: epoch ms, or a date and time that Date reads (ISO 8601). */
export function moment(text: string): number {
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(ms)) throw new InvalidArgumentError('not a time (ISO 8601, or epoch ms).');
  return ms;
}
