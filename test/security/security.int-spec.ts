import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { RedisAckQueueService, RedisConnectionError } from '../../lib';
import { captureLogs, expectLogs, loggedLines } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { TlsRedisServer } from '../support/tls-redis';
import { untilConsumerBlocked } from '../support/waits';

/** The ACL line the README documents for a queue user limited to its prefix. */
const ACL_RULES = [
  'on',
  '>queue-user-pw',
  'resetkeys',
  '~{shop:*',
  'resetchannels',
  '&{shop:*',
  '-@all',
  '+@read',
  '+@write',
  '+@scripting',
  '+@connection',
  '+@blocking',
  '+@pubsub',
  '-@dangerous',
  '+info',
  '+time',
];

describe('security', () => {
  const fx = useRedis({ password: 'admin-secret-pw' });

  it('runs with an ACL user limited to ~{<prefix>:* and the documented command categories', async () => {
    expectLogs(/went to the dead letters as failed/);
    await fx.redis.acl('SETUSER', 'queue-user', ...ACL_RULES);
    const queue = await fx.service({
      connection: `redis://queue-user:queue-user-pw@127.0.0.1:${fx.server.port}`,
      prefix: 'shop',
      maxAttempts: 1,
    });
    const topic = uniqueTopic();
    const seen: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => {
      seen.push(payload);
      if (payload === 'fails') throw new Error('no');
    });
    await queue.pushMany(topic, [{ payload: 'works' }, { payload: 'fails' }, { payload: 'later', delayMs: 100 }]);
    await queue.waitUntilIdle(topic);
    expect(seen.sort()).toEqual(['fails', 'later', 'works']);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 1, paused: false });
    expect(await queue.requeueDead(topic)).toBe(1);
    // Requeued, handled (and failed) again, dead again: dead === 1 alone held before the requeue too.
    await eventually(() => seen.filter((payload) => payload === 'fails').length === 2);
    await eventually(async () => (await queue.stats(topic)).dead === 1);
    expect(await queue.purgeDead(topic)).toBe(1);
    await consumer.close();
    // Schedules and their prefix-wide index (`{<prefix>:}:...`) are inside ~{<prefix>:* too.
    await queue.upsertSchedule(topic, 'acl', { everyMs: 3_600_000 });
    expect((await queue.schedules()).map((s) => `${s.topic}/${s.name}`)).toEqual([`${topic}/acl`]);
    expect(await queue.removeSchedule(topic, 'acl')).toBe(true);
    // Cancelling a leased message publishes on the topic's channel (&{<prefix>:*, +@pubsub).
    await queue.push(topic, 'leased', { id: 'c1' });
    const [leased] = await queue.reserve(topic, { leaseMs: 60_000 });
    expect(await queue.cancel(topic, leased.id)).toBe('leased');
    // The same user cannot touch keys outside its prefix, nor run dangerous commands.
    const outside = await fx.service({
      connection: `redis://queue-user:queue-user-pw@127.0.0.1:${fx.server.port}`,
      prefix: 'other',
    });
    await expect(outside.push(topic, 1)).rejects.toMatchObject({ redisCode: 'NOPERM', operation: 'push' });
    // The prefix-wide keys (topic registry, schedule index) are under {<prefix>:}, inside ~{<prefix>:*.
    expect(await queue.topics()).toEqual([topic]);
  });

  it('pushes with an ACL narrower than ~{<prefix>:* that leaves the topic registry out, warning once', async () => {
    expectLogs(/topic registry could not record topic/);
    // ~{shop:t* covers the topics' keys ({shop:topic...}) but not the registry ({shop:}:topics).
    const rules = ACL_RULES.map((rule) => (rule === '~{shop:*' ? '~{shop:t*' : rule));
    await fx.redis.acl('SETUSER', 'old-queue-user', ...rules.map((r) => r.replace('queue-user-pw', 'old-pw')));
    const queue = await fx.service({
      connection: `redis://old-queue-user:old-pw@127.0.0.1:${fx.server.port}`,
      prefix: 'shop',
    });
    const topic = uniqueTopic();
    await queue.push(topic, 1);
    await queue.push(topic, 2);
    expect((await queue.stats(topic)).ready).toBe(2);
    expect(loggedLines(/topic registry could not record/)).toHaveLength(1);
  });

  it('works over TLS (rediss://), blocking consumer connections included', async () => {
    const server = await TlsRedisServer.start();
    const admin = new Redis({ host: '127.0.0.1', port: server.port, tls: { ca: server.ca } });
    try {
      const queue = new RedisAckQueueService({
        connection: { host: '127.0.0.1', port: server.port, tls: { ca: server.ca } },
      });
      await queue.connect();
      const topic = uniqueTopic();
      const seen: unknown[] = [];
      const consumer = queue.consume(topic, (payload) => void seen.push(payload));
      // The blocking connection (a duplicate of the TLS one) is in its wait: the push must wake it.
      await untilConsumerBlocked([admin], topic);
      await queue.push(topic, 'over tls');
      await eventually(() => seen.length === 1, 3_000);
      await queue.push(topic, 'delayed over tls', { delayMs: 200 });
      await eventually(() => seen.length === 2, 3_000);
      await consumer.close();
      await queue.close();
    } finally {
      admin.disconnect();
      await server.stop();
    }
  });

  // ioredis' ReplyError keeps the AUTH command's arguments (the password); Nest's
  // ExceptionHandler logs a startup error with util.inspect, cause included.
  it('keeps a wrong password out of the whole startup error, cause chain included (as Nest logs it)', async () => {
    const wrong = new RedisAckQueueService({ connection: `redis://:URL-SECRET-pw@127.0.0.1:${fx.server.port}` });
    expectLogs(/Cannot connect to Redis at/);
    const error: unknown = await wrong.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    await wrong.close(0);
    expect(error).toBeInstanceOf(RedisConnectionError);
    expect(inspect(error, { depth: 10 })).not.toMatch(/URL-SECRET/);
  });

  it('never logs or throws a password, a URL credential or payload content', async () => {
    const logs = captureLogs();
    const errors: string[] = [];
    const consoleLines: string[] = [];
    const spies = (['error', 'warn', 'log'] as const).map((level) =>
      jest
        .spyOn(console, level)
        .mockImplementation((...args: unknown[]) => void consoleLines.push(args.map(String).join(' '))),
    );
    try {
      const secretPayload = { card: 'PAYLOAD-SECRET-4242' };
      // A wrong password in the URL: startup fails, the message names the server only.
      const wrong = new RedisAckQueueService({ connection: `redis://:URL-SECRET-pw@127.0.0.1:${fx.server.port}` });
      await wrong.connect().catch((error: Error) => errors.push(error.message, String(error.stack)));
      await wrong.close(0);
      // A working queue where things go wrong: failures, dead letters, lost leases, bad input.
      const queue = await fx.service({
        maxAttempts: 2,
        backoff: { type: 'fixed', delayMs: 10 },
        leaseMs: 100,
        maxPayloadBytes: 50,
      });
      const topic = uniqueTopic();
      const consumer = queue.consume(topic, async (payload) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error(`handler failed`);
        void payload;
      });
      await queue.push(topic, secretPayload);
      await queue
        .push(topic, { blob: 'PAYLOAD-SECRET-4242'.repeat(10) })
        .catch((error: Error) => errors.push(error.message));
      await queue.push(topic, { f: () => 'PAYLOAD-SECRET-4242' }).catch((error: Error) => errors.push(error.message));
      await queue.waitUntilIdle(topic);
      await fx.server.restart();
      await queue.push(topic, secretPayload).catch((error: Error) => errors.push(error.message));
      await consumer.close();
      const everything = [...logs.lines, ...errors, ...consoleLines].join('\n');
      expect(errors.length).toBeGreaterThanOrEqual(3);
      // The log was really captured (the failures and dead letters above): the checks below read something.
      // The outage's own line depends on how fast the restarted server answers: not required.
      expect(logs.lines.some((line) => /went to the dead letters/.test(line))).toBe(true);
      expect(everything).not.toMatch(/SECRET/);
      expect(everything).not.toMatch(/admin-secret-pw/);
    } finally {
      logs.restore();
      spies.forEach((spy) => spy.mockRestore());
    }
  });
});
