import { execFileSync } from 'node:child_process';

/** Fails the run at once, with the fix, when the tests cannot start their own Redis. */
export default function globalSetup(): void {
  try {
    execFileSync(redisServerBinary(), ['--version'], { stdio: 'pipe' });
  } catch {
    throw new Error(
      `redis-server was not found (looked for "${redisServerBinary()}"). The tests start private ` +
        'redis-server processes: install it (Debian/Ubuntu: apt-get install -y redis-server, ' +
        'macOS: brew install redis) or point REDIS_SERVER_BIN at the binary.',
    );
  }
}

export function redisServerBinary(): string {
  return process.env.REDIS_SERVER_BIN ?? 'redis-server';
}
