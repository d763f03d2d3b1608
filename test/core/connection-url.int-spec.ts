import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  InvalidConnectionUrlError,
  InvalidOptionError,
  RedisAckQueueModule,
  RedisAckQueueService,
  type RedisAckQueueConnection,
} from '../../lib';
import type { CliIo } from '../../lib/cli/cli-io';
import { runCli } from '../../lib/cli/program';
import { expectLogs, testLogger } from '../support/capture-logs';
import { singleServerOnly, uniqueTopic, useRedis } from '../support/queue-fixture';

const SOCKET = join(tmpdir(), `ackq-url-${process.pid}.sock`);
const ACCEPTED = 'redis://[user:password@]host:port/db, rediss://... (TLS), unix:///path/to/redis.sock';

/** Connection strings refused before any socket, each with the scheme its refusal names. */
const REFUSED: [url: string, scheme: string][] = [
  ['http://u:SECRET-pw@127.0.0.1:6379', 'http:'],
  ['HTTPS://127.0.0.1:6379', 'https:'],
  ['tcp://127.0.0.1:6379', 'tcp:'],
  ['redis:/127.0.0.1:6379', 'redis:'],
  ['rediss:/:SECRET-pw@127.0.0.1:6379', 'rediss:'],
  ['unix://relative/redis.sock', 'unix:'],
  ['myhost:SECRET-pw', 'myhost:'],
];

/**
 * A connection string of a scheme the library does not read (or a malformed redis: one) is
 * refused when the service is built, naming the scheme and never the URL; every form that
 * worked before still connects.
 */
singleServerOnly('one server, reached by URL and socket').describe('connection URLs', () => {
  const fx = useRedis({ config: ['unixsocket', SOCKET, 'unixsocketperm', '700'] });

  it.each(REFUSED)('refuses %s at construction, naming %s and the accepted forms', (url, scheme) => {
    let thrown: unknown;
    try {
      new RedisAckQueueService({ connection: url, connectTimeoutMs: 60_000 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidConnectionUrlError);
    expect(thrown).toBeInstanceOf(InvalidOptionError);
    const error = thrown as InvalidConnectionUrlError;
    expect(error.scheme).toBe(scheme);
    expect(error.message).toContain(`"${scheme}"`);
    expect(error.message).toContain(ACCEPTED);
    expect(JSON.stringify({ ...error, message: error.message })).not.toMatch(/SECRET|127\.0\.0\.1|relative/);
  });

  it('refuses a bad cluster seed the same way', () => {
    const connection = { cluster: ['http://127.0.0.1:7000'] } as RedisAckQueueConnection;
    expect(() => new RedisAckQueueService({ connection })).toThrow(InvalidConnectionUrlError);
  });

  it('still connects with every form that worked before', async () => {
    const { port } = fx.server;
    const forms = [
      `redis://127.0.0.1:${port}`,
      `REDIS://127.0.0.1:${port}/0`,
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `//127.0.0.1:${port}`,
      String(port),
      SOCKET,
      `unix://${SOCKET}`,
      `unix:${SOCKET}`,
      `${SOCKET}?db=2`,
    ];
    for (const connection of forms) {
      const queue = await fx.service({ connection });
      const topic = uniqueTopic('url');
      await queue.push(topic, connection);
      expect((await queue.stats(topic)).ready).toBe(1);
    }
  });

  it('fails a Nest app at startup, before any connection', async () => {
    // Nest reports the failed startup (ExceptionHandler).
    expectLogs(/Invalid connection URL/);
    @Module({ imports: [RedisAckQueueModule.forRoot({ connection: 'http://:SECRET-pw@127.0.0.1:6379' })] })
    class AppModule {}
    const started = NestFactory.createApplicationContext(AppModule, { logger: testLogger(), abortOnError: false });
    await expect(started).rejects.toBeInstanceOf(InvalidConnectionUrlError);
    await expect(started).rejects.toThrow(
      /^Invalid connection URL: the scheme "http:" is not one of Redis; use redis:/,
    );
  });

  it('makes the CLI exit 2 (usage) on --url and REDIS_URL, with one line that names the scheme', async () => {
    const run = async (argv: string[], env: Record<string, string>) => {
      const err: string[] = [];
      const io: CliIo = {
        out: () => undefined,
        err: (text) => void err.push(text),
        interactive: false,
        ask: () => Promise.resolve(''),
      };
      const code = await runCli(['node', 'redis-ack-queue', ...argv, 'topics'], io, env);
      return { code, stderr: err.join('') };
    };
    const byFlag = await run(['--url', 'http://:SECRET-pw@127.0.0.1:6379'], {});
    const byEnv = await run([], { REDIS_URL: 'redis:/:SECRET-pw@127.0.0.1:6379' });
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toMatch(/^redis-ack-queue: Invalid connection URL: the scheme "http:" is not one of Redis/);
    expect(byEnv.code).toBe(2);
    expect(byEnv.stderr).toMatch(/^redis-ack-queue: Invalid connection URL: it starts with "redis:" but is not a URL/);
    expect(byFlag.stderr + byEnv.stderr).not.toContain('SECRET');
  });
});
