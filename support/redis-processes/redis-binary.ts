import { execFileSync } from 'node:child_process';

/** The server binary the tests and benchmarks start: REDIS_SERVER_BIN, else `redis-server` on the PATH. */
export function redisServerBinary(): string {
  return process.env.REDIS_SERVER_BIN ?? 'redis-server';
}

/** The client that forms clusters (`--cluster create`): REDIS_CLI_BIN, else `redis-cli` on the PATH. */
export function redisCliBinary(): string {
  return process.env.REDIS_CLI_BIN ?? 'redis-cli';
}

/**
 * The server and its version, e.g. 'Redis 7.0.15' or 'Valkey 8.0.1' (REDIS_SERVER_BIN may name
 * either); throws with the fix when the binary cannot run, so a run fails at once instead of at
 * its first spawn.
 */
export function redisServerRelease(): string {
  let output: string;
  try {
    output = execFileSync(redisServerBinary(), ['--version'], { stdio: 'pipe' }).toString();
  } catch {
    throw new Error(
      `redis-server was not found (looked for "${redisServerBinary()}"). The tests and benchmarks start ` +
        'private redis-server processes: install it (Debian/Ubuntu: apt-get install -y redis-server, ' +
        'macOS: brew install redis) or point REDIS_SERVER_BIN at the binary.',
    );
  }
  // `Redis server v=7.0.15 sha=...` or `Valkey server v=8.0.1 sha=...`
  const [, name = 'Redis', version = 'unknown'] = /^(\w+) server v=([\d.]+)/.exec(output) ?? [];
  return `${name} ${version}`;
}
