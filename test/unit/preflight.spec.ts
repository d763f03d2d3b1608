import { RedisConnectionError, UnsafeRedisConfigError } from '../../lib';
import type { RedisClient } from '../../lib/engine/redis/connection';
import { preflight } from '../../lib/engine/redis/preflight';
import type { QueueLogger } from '../../lib/observability/queue-logger';

/** A target of its own per check, unless a test means the same one (the AOF warning is once per target). */
let nextPort = 6379;

/** INFO as each server answers it (the fields preflight reads). */
const REDIS_7 = 'redis_version:7.0.15\r\nmaxmemory_policy:noeviction\r\naof_enabled:0\r\n';
const REDIS_6 = 'redis_version:6.2.14\r\nmaxmemory_policy:noeviction\r\naof_enabled:1\r\n';
const VALKEY_8 =
  'redis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nmaxmemory_policy:noeviction\r\naof_enabled:0\r\n';

function check(info: string, allowEviction = false, port = nextPort++): { warnings: string[]; run: Promise<void> } {
  const client = { info: () => Promise.resolve(info), options: { host: '127.0.0.1', port, db: 0 } };
  const warnings: string[] = [];
  const logger = { warn: (line: string) => void warnings.push(line) } as unknown as QueueLogger;
  return { warnings, run: preflight(client as unknown as RedisClient, allowEviction, logger) };
}

describe('preflight: the startup check names the server it found', () => {
  it('accepts Valkey 8 (INFO: redis_version 7.2.4, server_name valkey) and names it Valkey', async () => {
    const { warnings, run } = check(VALKEY_8);
    await expect(run).resolves.toBeUndefined();
    expect(warnings).toEqual([
      expect.stringMatching(/^Valkey at redis:\/\/127\.0\.0\.1:6379\/0 has appendonly off: a Valkey restart/),
    ]);
  });

  it('says Redis for Redis', async () => {
    const { warnings, run } = check(REDIS_7);
    await expect(run).resolves.toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/^Redis at .* has appendonly off: a Redis restart/)]);
  });

  it('warns about the AOF once per process and target, however many connections check it', async () => {
    const port = nextPort++;
    const first = check(REDIS_7, false, port);
    const second = check(REDIS_7, false, port);
    const other = check(REDIS_7);
    await Promise.all([first.run, second.run, other.run]);
    expect([...first.warnings, ...second.warnings]).toEqual([
      expect.stringContaining(`127.0.0.1:${port}/0 has appendonly off`),
    ]);
    expect(other.warnings).toHaveLength(1);
  });

  it('refuses an evicting policy naming the server', async () => {
    const { run } = check(VALKEY_8.replace('noeviction', 'allkeys-lru'));
    await expect(run).rejects.toBeInstanceOf(UnsafeRedisConfigError);
    await expect(run).rejects.toThrow(/^Valkey at .* uses maxmemory-policy allkeys-lru/);
  });

  it('refuses Redis 6 with the server and version it found', async () => {
    const { run } = check(REDIS_6);
    await expect(run).rejects.toBeInstanceOf(RedisConnectionError);
    await expect(run).rejects.toThrow('is Redis 6.2.14: the queue needs Redis 7.0 or newer');
  });
});
