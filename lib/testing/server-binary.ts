import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { RedisServerNotFoundError } from '../errors/test-redis.errors';

/** The server binary names looked up on the PATH when neither the option nor REDIS_SERVER_BIN names one. */
const ON_PATH = ['redis-server', 'valkey-server'];

/**
 * The binary startTestRedis runs: `binary` (the option), else REDIS_SERVER_BIN, else
 * `redis-server`, else `valkey-server` on the PATH. A name with a slash is a path; a bare name
 * is looked up on the PATH.
 * @throws {RedisServerNotFoundError} naming everything looked for, when none is there.
 */
export function findServerBinary(binary: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const named = binary ?? (env.REDIS_SERVER_BIN || undefined);
  const source = named === undefined ? undefined : binary !== undefined ? 'the binary option' : 'REDIS_SERVER_BIN';
  const candidates = named === undefined ? ON_PATH : [named];
  for (const candidate of candidates) {
    const found = locate(candidate, env.PATH ?? '');
    if (found) return found;
  }
  throw new RedisServerNotFoundError(candidates.map((name) => describe(name, source)));
}

function locate(name: string, path: string): string | undefined {
  if (isPath(name)) {
    const file = resolve(name);
    return isExecutable(file) ? file : undefined;
  }
  const extensions = process.platform === 'win32' ? ['', '.exe'] : [''];
  for (const dir of path.split(delimiter).filter(Boolean))
    for (const extension of extensions) {
      const file = join(dir, name + extension);
      if (isExecutable(file)) return file;
    }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `"/opt/redis/bin/redis-server" (REDIS_SERVER_BIN)`, `"redis-server" on the PATH`. */
function describe(name: string, source: string | undefined): string {
  const where = isPath(name) ? `"${name}"` : `"${name}" on the PATH`;
  return source === undefined ? where : `${where} (${source})`;
}

function isPath(name: string): boolean {
  return isAbsolute(name) || name.includes('/') || name.includes('\\');
}
