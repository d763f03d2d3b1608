import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisServerNotFoundError, startTestRedis, TestRedisStartError, type TestRedis } from '../../lib/testing';
import { sendCommand } from '../../lib/testing/redis-probe';
import { findServerBinary } from '../../lib/testing/server-binary';
import { redisServerBinary } from '../../support/redis-processes/redis-binary';
import { eventually } from '../support/queue-fixture';

/** The harness's binary (REDIS_SERVER_BIN or redis-server on the PATH), as a path. */
const binary = findServerBinary(redisServerBinary());
const answers = async (port: number) => (await sendCommand(port, 'PING')) === '+PONG';

/** A port is free when a listener can take it. */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

const started: TestRedis[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((redis) => redis.stop()));
});

async function start(options: Parameters<typeof startTestRedis>[0] = {}): Promise<TestRedis> {
  const redis = await startTestRedis({ binary, ...options });
  started.push(redis);
  return redis;
}

describe('startTestRedis', () => {
  it('starts a memory-only server on a free port that answers at once, and stop() frees the port and removes its folder', async () => {
    const redis = await start();
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(existsSync(redis.dir)).toBe(true);
    const client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    expect(await client.config('GET', 'save')).toEqual(['save', '']);
    expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    await client.set('k', 'v');
    await redis.flush();
    expect(await client.dbsize()).toBe(0);
    client.disconnect();

    await redis.stop();
    expect(await answers(redis.port)).toBe(false);
    expect(await portFree(redis.port)).toBe(true);
    expect(existsSync(redis.dir)).toBe(false);
    await redis.stop(); // a second stop does nothing
    await expect(redis.flush()).rejects.toThrow(/Cannot flush the test Redis/);
  });

  it('gives each server its own port and folder', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    expect(a.port).not.toBe(b.port);
    expect(a.dir).not.toBe(b.dir);
  });

  it('passes extra arguments to the server', async () => {
    const redis = await start({ args: ['--maxmemory', '12mb'] });
    const client = new Redis(redis.url);
    expect(await client.config('GET', 'maxmemory')).toEqual(['maxmemory', String(12 * 1024 * 1024)]);
    client.disconnect();
  });

  it('reports the last lines of its log when the server fails to start', async () => {
    const error = await start({ args: ['--maxmemory-policy', 'no-such-policy'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TestRedisStartError);
    const failed = error as TestRedisStartError;
    expect(failed.code).toBe('TEST_REDIS_START_FAILED');
    expect(failed.message).toMatch(/did not start: it exited/);
    expect(failed.logTail).toMatch(/maxmemory-policy/);
    expect(failed.message).toContain(failed.logTail);
  });

  it('runs the binary from REDIS_SERVER_BIN, and prefers the binary option over it', async () => {
    const env = process.env.REDIS_SERVER_BIN;
    try {
      process.env.REDIS_SERVER_BIN = binary;
      expect((await start({ binary: undefined })).binary).toBe(binary);
      process.env.REDIS_SERVER_BIN = '/no/such/redis-server';
      expect((await start({ binary })).binary).toBe(binary);
    } finally {
      if (env === undefined) delete process.env.REDIS_SERVER_BIN;
      else process.env.REDIS_SERVER_BIN = env;
    }
  });
});

describe('startTestRedis without a server binary', () => {
  let emptyDir: string;
  beforeAll(() => (emptyDir = mkdtempSync(join(tmpdir(), 'ackq-empty-path-'))));
  afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));

  it('finds redis-server, else valkey-server, on the PATH', () => {
    const valkey = join(emptyDir, 'valkey-server');
    writeFileSync(valkey, '#!/bin/sh\n');
    chmodSync(valkey, 0o755);
    try {
      expect(findServerBinary(undefined, { PATH: `${emptyDir}` })).toBe(valkey);
      expect(findServerBinary(undefined, { PATH: `${dirname(binary)}:${emptyDir}` })).toMatch(/(redis|valkey)-server$/);
    } finally {
      rmSync(valkey);
    }
  });

  it('fails with RedisServerNotFoundError saying what was looked for and how to install one', async () => {
    const path = process.env.PATH;
    const env = process.env.REDIS_SERVER_BIN;
    try {
      process.env.PATH = emptyDir;
      delete process.env.REDIS_SERVER_BIN;
      const error = await startTestRedis().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisServerNotFoundError);
      const notFound = error as RedisServerNotFoundError;
      expect(notFound.code).toBe('REDIS_SERVER_NOT_FOUND');
      expect(notFound.looked).toEqual(['"redis-server" on the PATH', '"valkey-server" on the PATH']);
      expect(notFound.message).toMatch(/apt install redis-server/);
      expect(notFound.message).toMatch(/brew install redis/);
      expect(notFound.message).toMatch(/Valkey 8/);
      expect(notFound.message).toMatch(/REDIS_SERVER_BIN/);

      process.env.REDIS_SERVER_BIN = join(emptyDir, 'missing-redis-server');
      const fromEnv = (await startTestRedis().catch((e: unknown) => e)) as RedisServerNotFoundError;
      expect(fromEnv).toBeInstanceOf(RedisServerNotFoundError);
      expect(fromEnv.looked).toEqual([`"${join(emptyDir, 'missing-redis-server')}" (REDIS_SERVER_BIN)`]);

      const fromOption = (await startTestRedis({ binary: 'no-such-server' }).catch(
        (e: unknown) => e,
      )) as RedisServerNotFoundError;
      expect(fromOption.looked).toEqual(['"no-such-server" on the PATH (the binary option)']);
    } finally {
      process.env.PATH = path;
      if (env === undefined) delete process.env.REDIS_SERVER_BIN;
      else process.env.REDIS_SERVER_BIN = env;
    }
  });
});

describe('a test process that ends without stop()', () => {
  /** Runs test-redis-process.js in `mode`; resolves with the server it started, once the process is gone. */
  async function runChild(mode: 'return' | 'exit' | 'wait'): Promise<{ port: number; dir: string }> {
    const child = spawn(process.execPath, [join(__dirname, 'test-redis-process.js')], {
      env: { ...process.env, MODE: mode, REDIS_SERVER_BIN: binary },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const line = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
    });
    const server = JSON.parse(line) as { port: number; dir: string };
    if (mode === 'wait') {
      expect(await answers(server.port)).toBe(true);
      child.kill('SIGTERM');
    }
    await exited;
    return server;
  }

  it.each(['return', 'exit', 'wait'] as const)(
    'leaves no server running and no folder behind (the process %s)',
    async (mode) => {
      const { port, dir } = await runChild(mode);
      // Killed on the way out (SIGKILL sent, not awaited: an exit listener cannot wait).
      await eventually(async () => !(await answers(port)));
      expect(existsSync(dir)).toBe(false);
    },
  );
});
