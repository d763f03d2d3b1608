import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

const logger = new Logger('SampleRedis');

/**
 * Where the sample finds Redis: REDIS_URL if set, else 127.0.0.1:6379 when it answers,
 * else a private server started here and stopped when the app exits: REDIS_SERVER_BIN
 * (e.g. valkey-server), else redis-server.
 */
export async function resolveRedis(): Promise<{ url: string; stop: () => void }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: () => undefined };
  if (await answers(6379)) return { url: 'redis://127.0.0.1:6379', stop: () => undefined };
  return startPrivateRedis();
}

async function startPrivateRedis(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ackq-sample-'));
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''],
    {
      stdio: 'ignore',
    },
  );
  child.on('error', (error) => {
    logger.error(`Cannot start ${binary} (${error.message}): install it, set REDIS_SERVER_BIN or set REDIS_URL`);
    process.exit(1);
  });
  for (let i = 0; i < 250 && !(await answers(port)); i++) await new Promise((r) => setTimeout(r, 20));
  logger.log(`No Redis at 127.0.0.1:6379: started a private ${binary} on port ${port} (stops with the app)`);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString())));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
