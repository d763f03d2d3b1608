import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { CliIo } from '../../lib/cli/cli-io';
import { runCli } from '../../lib/cli/program';

/** The built binary (npm test's pretest builds dist/; run `npm run build` before a CLI spec alone). */
export const CLI_MAIN = join(__dirname, '../../dist/cli/main.js');

/** What one run of the CLI printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in this process, its output captured as the process would print it: what most
 * cases check (the commands, their output and exit codes), without starting Node for each. The
 * environment is only `env` (and PATH), as in runCliBinary.
 */
export async function runCliHere(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    interactive: false,
    ask: () => Promise.reject(new Error('the CLI asked a question without a terminal')),
  };
  const code = await runCli(['node', 'redis-ack-queue', ...args], io, { PATH: process.env.PATH ?? '', ...env });
  return { code, stdout, stderr };
}

/**
 * Runs the built binary in a process of its own: for what only a process shows (that it ends,
 * with its exit code, that it reads its own environment such as TZ or REDIS_URL). The bound
 * only stops a hang, so it is generous: a loaded machine takes seconds to start Node.
 */
export function runCliBinary(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_MAIN, ...args],
      { timeout: 120_000, env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}
