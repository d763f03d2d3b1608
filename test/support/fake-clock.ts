import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
  '/usr/local/lib/faketime/libfaketime.so.1',
];

/** Where libfaketime is (the library the `faketime` command preloads), or undefined. */
export function libfaketimePath(): string | undefined {
  if (process.env.LIBFAKETIME && existsSync(process.env.LIBFAKETIME)) return process.env.LIBFAKETIME;
  const known = CANDIDATES.find((path) => existsSync(path));
  if (known) return known;
  try {
    const listed = execFileSync('dpkg', ['-L', 'libfaketime'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return listed.split('\n').find((line) => line.endsWith('/libfaketime.so.1'));
  } catch {
    return undefined;
  }
}

/**
 * Environment that shifts a child process' wall clock by `offset` (libfaketime syntax:
 * '-300s', '+5m'). The library is preloaded directly rather than through the `faketime`
 * command, which forks: a signal sent to it would not reach the Node process. Monotonic
 * clocks stay true, as on a host whose wall clock is off.
 */
export function skewedClockEnv(offset: string): Record<string, string> {
  const library = libfaketimePath();
  if (!library) {
    throw new Error(
      'libfaketime was not found: the clock-skew fault test needs it (Debian/Ubuntu: apt-get install -y faketime; ' +
        'or point LIBFAKETIME at libfaketime.so.1)',
    );
  }
  return { LD_PRELOAD: library, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}
