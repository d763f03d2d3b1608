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

/** Runs a script of this folder; resolves with its process, the server it printed, and its exit code and output. */
function runScript(script: string, mode = '') {
  const child = spawn(process.execPath, [join(__dirname, script)], {
    env: { ...process.env, MODE: mode, REDIS_SERVER_BIN: binary },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, out })),
  );
  const server = new Promise<{ port: number; dir: string }>((resolve) => {
    const read = () =>
      out.includes('\n') ? resolve(JSON.parse(out.split('\n')[0]) as { port: number; dir: string }) : undefined;
    child.stdout.on('data', read);
  });
  return { child, server, exited };
}

describe('a test process that ends without stop()', () => {
  /** Runs test-redis-process.js in `mode`; resolves with the server it started, once the process is gone. */
  async function runChild(mode: 'return' | 'exit' | 'wait'): Promise<{ port: number; dir: string }> {
    const { child, server, exited } = runScript('test-redis-process.js', mode);
    const started = await server;
    if (mode === 'wait') {
      expect(await answers(started.port)).toBe(true);
      child.kill('SIGTERM');
    }
    await exited;
    return started;
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

  it('a SIGKILLed process leaves its server, and the next start shuts it down and removes its folder', async () => {
    const { child, server, exited } = runScript('test-redis-process.js', 'wait');
    const orphan = await server;
    child.kill('SIGKILL');
    await exited;
    // Nothing could stop it: it outlives its owner.
    expect(await answers(orphan.port)).toBe(true);
    expect(existsSync(orphan.dir)).toBe(true);

    const next = await start();
    expect(await answers(orphan.port)).toBe(false);
    expect(existsSync(orphan.dir)).toBe(false);
    // The reaper touched only the dead owner's server.
    expect(await answers(next.port)).toBe(true);
  });
});

describe('await redis.stop() in a script with nothing else to do', () => {
  it.each([
    ['a CommonJS script', 'test-redis-process.js', 'stop'],
    ['an ES module (top-level await)', 'test-redis-process.mjs', ''],
  ])('settles in %s, which exits with code 0 after it', async (_kind, script, mode) => {
    const { server, exited } = runScript(script, mode);
    const { port, dir } = await server;
    const { code, out } = await exited;
    expect(out.split('\n')[1]).toBe('stopped');
    expect(code).toBe(0);
    expect(await answers(port)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});
