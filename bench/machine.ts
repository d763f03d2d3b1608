import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

/** The CPU model, for the report's machine line. */
export function cpuModel(): string {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // not Linux: fall back to what Node reports
  }
  return /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
}

/** The commit lib/ was compiled from, and whether it had uncommitted changes. */
export function libVersion(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: join(__dirname, '..', '..', '..'), stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    const dirty = git('status', '--porcelain', '--', 'lib') !== '';
    return `lib/ at commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ' plus uncommitted changes' : ''}`;
  } catch {
    return 'lib/ (no git)';
  }
}

/** The 1, 5 and 15 minute load averages, for the report's machine line ("0.52 / 0.61 / 0.70"). */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
}

/** "<lowest> to <highest>" of a figure over the rounds. */
export function spread(values: number[], format: (n: number) => string): string {
  return `${format(Math.min(...values))} to ${format(Math.max(...values))}`;
}
