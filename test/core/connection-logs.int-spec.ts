import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RedisAckQueueModule, RedisAckQueueService, RedisConnectionError } from '../../lib';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { captureLogs, expectLogs, testLogger } from '../support/capture-logs';
import { eventually, singleServerOnly, useRedis } from '../support/queue-fixture';
import { RedisServer } from '../../support/redis-processes/redis-server';

const PASSWORD = 'SECRET-conn-pw';
const HINT = 'Is Redis running at that address? Check the host and port of the connection option, TLS';

/**
 * What the log says of the connection: where each service connected (once, at the default
 * logLevel, never a credential), the default connection when none is given, and a first
 * failure told apart from a connection lost after it was ready.
 */
singleServerOnly('targets of one server').describe('connection log lines', () => {
  const fx = useRedis({ password: PASSWORD });
  const url = () => fx.connectionWith({ username: 'default' }) as string;
  const target = () => `redis://127.0.0.1:${fx.server.port}/0`;

  /** Runs `work` with the log captured; returns its lines (`<level> <message>`). */
  async function logged(work: () => Promise<unknown>): Promise<string[]> {
    const logs = captureLogs();
    try {
      await work();
      return logs.lines;
    } finally {
      logs.restore();
    }
  }

  it('logs one line at connect, at the default logLevel, with target, prefix and TLS but no credential', async () => {
    let queue!: RedisAckQueueService;
    const lines = await logged(async () => (queue = await fx.service({ connection: url(), prefix: 'shown' })));
    const connected = lines.filter((line) => line.includes('onnected to Redis'));
    expect(connected).toEqual([`log Connected to Redis at ${target()} (prefix "shown", TLS off)`]);
    expect(queue.describeConnection()).toBe(`${target()} (prefix "shown", TLS off)`);
    expect(lines.join('\n')).not.toMatch(/SECRET|default:/);
    // 'error' and 'silent' hide it.
    expect(await logged(() => fx.service({ connection: url(), logLevel: 'error' }))).toEqual([]);
  });

  it('names the queue of a named registration in a Nest app', async () => {
    @Module({ imports: [RedisAckQueueModule.forRoot({ name: 'reports', connection: url(), prefix: 'rep' })] })
    class AppModule {}
    const lines = await logged(async () => {
      const app = await NestFactory.createApplicationContext(AppModule, { logger: testLogger() });
      await app.close();
    });
    expect(lines.filter((line) => line.includes('onnected to Redis'))).toEqual([
      `log Queue "reports" connected to Redis at ${target()} (prefix "rep", TLS off)`,
    ]);
    expect(lines.join('\n')).not.toMatch(/SECRET/);
  });

  it('warns once when no connection is given, before any socket (the default is a shared Redis)', async () => {
    let queue!: RedisAckQueueService;
    const lines = await logged(() => Promise.resolve(void (queue = new RedisAckQueueService({ logLevel: 'warn' }))));
    expect(lines).toEqual([
      `warn No connection option given: using the default ${DEFAULTS.connection}, which may be a Redis other apps ` +
        'share. Set connection to the Redis this app is meant to use (in tests, a Redis of their own: ' +
        'nestjs-redis-ack-queue/testing)',
    ]);
    await queue.close(0);
    expect(await logged(() => new RedisAckQueueService({ connection: url() }).close(0))).toEqual([]);
  });

  it('says "Cannot connect" and what to check on a first failure, in the log and in the error', async () => {
    const dead = await RedisServer.start();
    const { port } = dead;
    await dead.stop();
    const deadTarget = `redis://127.0.0.1:${port}/0`;
    let error: unknown;
    const lines = await logged(async () => {
      const queue = new RedisAckQueueService({
        connection: `redis://:${PASSWORD}@127.0.0.1:${port}`,
        connectTimeoutMs: 300,
      });
      error = await queue.connect().catch((e: unknown) => e);
      await queue.close(0);
    });
    expect(lines.filter((line) => line.startsWith('warn'))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn Cannot connect to Redis at ${escape(deadTarget)}: connect ECONNREFUSED [^ ]+\\. ${escape(HINT)}.* Retrying until it answers$`,
        ),
      ),
    ]);
    expect(error).toBeInstanceOf(RedisConnectionError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Cannot connect to Redis at ${escape(deadTarget)}: connect ECONNREFUSED .*\\(for 300 ms\\)\\. ${escape(HINT)}`,
      ),
    );
    expect([...lines, (error as Error).message].join('\n')).not.toMatch(/SECRET|Lost the connection/);
  });

  it('says "Lost the connection" only of a connection that had been ready', async () => {
    // The server comes back empty (no persistence): said in a warning of its own.
    expectLogs(/came back without the data/);
    // The only service on the server: each would log its own outage.
    await Promise.all(fx.services.map((service) => service.close(0)));
    const queue = await fx.service({ connection: url() });
    const logs = captureLogs();
    try {
      await fx.server.kill();
      await eventually(() => logs.lines.some((line) => line.startsWith('warn Lost')));
      await fx.server.restart();
      await queue.ping(10_000);
    } finally {
      logs.restore();
    }
    const { lines } = logs;
    expect(lines.filter((line) => /^warn (Lost the connection|Cannot connect)/.test(line))).toEqual([
      expect.stringMatching(new RegExp(`^warn Lost the connection to Redis at ${escape(target())} \\(`)),
    ]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
