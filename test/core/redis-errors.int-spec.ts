import { inspect } from 'node:util';
import { RedisAckQueueService, RedisCommandError, RedisConnectionError, RedisUnavailableError } from '../../lib';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { expectLogs } from '../support/capture-logs';
import { RedisServer } from '../../support/redis-processes/redis-server';
import { onCluster, singleServerOnly, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';
import { wellBefore } from '../support/waits';

/** A payload no error, log or event may carry. */
const SECRET_PAYLOAD = { card: 'PAYLOAD-MARKER-4111' };

/** Neither the error nor anything in its cause chain, as util.inspect prints it, holds any of `secrets`. */
function expectNothingOf(error: unknown, ...secrets: string[]) {
  const printed = inspect(error, { depth: Infinity, showHidden: true });
  for (const secret of secrets) expect(printed).not.toContain(secret);
  const chain: unknown[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) chain.push(e);
  expect(chain.length).toBeGreaterThan(0);
  // The command's name stays where ioredis kept it; its arguments do not.
  for (const e of chain) expect((e as { command?: { args?: unknown } }).command?.args).toBeUndefined();
}

describe('Redis errors surface as typed errors naming the operation', () => {
  const fx = useRedis({ password: 's3cret-pw' });
  // CONFIG is per server: on a cluster, every node gets it.
  const setConfig = (name: string, value: string) =>
    Promise.all(fx.nodes().map((node) => node.config('SET', name, value)));

  it('OOM: push fails and changes nothing, while consuming (which frees memory) still works', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'kept');
    const before = await snapshotTopic(fx.redis, topic);
    await setConfig('maxmemory-policy', 'noeviction');
    await setConfig('maxmemory', '1');
    try {
      const failure = queue.push(topic, SECRET_PAYLOAD);
      await expect(failure).rejects.toBeInstanceOf(RedisCommandError);
      expectNothingOf(await failure.catch((e: unknown) => e), 'PAYLOAD-MARKER');
      await expect(failure).rejects.toMatchObject({ redisCode: 'OOM', operation: 'push', topic });
      await expect(failure).rejects.toThrow(`Redis refused push on topic "${topic}": OOM`);
      expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
      const [message] = await queue.reserve(topic);
      expect(await queue.ack(message)).toBe(true);
    } finally {
      await setConfig('maxmemory', '0');
    }
    await expect(queue.push(topic, 'accepted')).resolves.toMatchObject({ duplicate: false });
  });

  it('NOPERM: a user without access to the keys gets an error naming the operation', async () => {
    await Promise.all(fx.nodes().map((node) => node.acl('SETUSER', 'narrow', 'on', '>narrow-pw', '~other:*', '+@all')));
    const queue = await fx.service({ connection: fx.connectionWith({ username: 'narrow', password: 'narrow-pw' }) });
    const failure = queue.push(uniqueTopic(), SECRET_PAYLOAD);
    await expect(failure).rejects.toMatchObject({ redisCode: 'NOPERM', operation: 'push' });
    expectNothingOf(await failure.catch((e: unknown) => e), 'PAYLOAD-MARKER', 'narrow-pw');
    await expect(failure).rejects.toThrow(/Redis refused push on topic ".*": NOPERM/);
  });

  it("NOPERM on every kind of call: the error says the operation in the user's words, never a script's name", async () => {
    await Promise.all(
      fx.nodes().map((node) => node.acl('SETUSER', 'narrow2', 'on', '>narrow-pw', '~other:*', '+@all')),
    );
    const queue = await fx.service({ connection: fx.connectionWith({ username: 'narrow2', password: 'narrow-pw' }) });
    const topic = uniqueTopic();
    const calls: [operation: string, call: () => Promise<unknown>][] = [
      ['read stats', () => queue.stats(topic)],
      ['read gauges', () => queue.gauges(topic)],
      ['read dead letters', () => queue.deadLetters(topic)],
      ['requeue dead letters', () => queue.requeueDead(topic)],
      ['purge dead letters', () => queue.purgeDead(topic)],
      ['get a message', () => queue.get(topic, 'a')],
      ['list messages', () => queue.list(topic, 'ready')],
      ['cancel a message', () => queue.cancel(topic, 'a')],
      ['pause', () => queue.pause(topic)],
      ['set limits', () => queue.setLimits(topic, { globalConcurrency: 2 })],
      ['read limits', () => queue.limits(topic)],
      ['list schedules', () => queue.schedules(topic)],
      ['remove a schedule', () => queue.removeSchedule(topic, 'tick')],
      ['run a schedule', () => queue.runScheduleNow(topic, 'tick')],
    ];
    for (const [operation, call] of calls) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect([operation, error]).toEqual([operation, expect.any(RedisCommandError)]);
      expect([operation, (error as RedisCommandError).message]).toEqual([
        operation,
        expect.stringMatching(new RegExp(`^Redis refused ${operation} on topic ".*": NOPERM`)),
      ]);
    }
  });

  const plainReplica = singleServerOnly('a cluster client sends writes to the master, never to a replica');
  plainReplica.it('READONLY: pushing to a replica fails with a typed error', async () => {
    const replica = await RedisServer.start();
    try {
      await replica.client().call('REPLICAOF', '127.0.0.1', String(fx.server.port));
      await replica.client().config('SET', 'masterauth', 's3cret-pw');
      const queue = new RedisAckQueueService({ connection: replica.url });
      await queue.connect();
      const failure = queue.push(uniqueTopic(), SECRET_PAYLOAD);
      await expect(failure).rejects.toMatchObject({ redisCode: 'READONLY', operation: 'push' });
      expectNothingOf(await failure.catch((e: unknown) => e), 'PAYLOAD-MARKER');
      await queue.close(0);
    } finally {
      await replica.stop();
    }
  });

  /** How long a good connect and close take here and now: the part of a failed connect that is not a timer. */
  async function goodConnectMs(): Promise<number> {
    const started = Date.now();
    const queue = new RedisAckQueueService({ connection: fx.connection });
    await queue.connect();
    await queue.close(0);
    return Date.now() - started;
  }

  it('a wrong password fails connect at once, without the password in the message', async () => {
    const queue = new RedisAckQueueService({ connection: fx.connectionWith({ password: 'wrong-pw' }) });
    // The refused handshake is also logged, as a failed connect.
    expectLogs(/Cannot connect to Redis at .*(WRONGPASS|NOAUTH|invalid password|refresh slots cache)/);
    const baselineMs = await goodConnectMs();
    const started = Date.now();
    const failure = queue.connect();
    await expect(failure).rejects.toBeInstanceOf(RedisConnectionError);
    await expect(failure).rejects.toThrow(/WRONGPASS|NOAUTH|invalid password/);
    await expect(failure).rejects.not.toThrow(/wrong-pw/);
    expectNothingOf(await failure.catch((e: unknown) => e), 'wrong-pw');
    // At once: not after retrying through the connect timeout.
    expect(Date.now() - started).toBeLessThan(baselineMs + wellBefore(DEFAULTS.connectTimeoutMs));
    await queue.close(0);
  });

  it('an address where nothing listens fails connect within connectTimeoutMs', async () => {
    const dead = await RedisServer.start();
    const port = dead.port;
    await dead.stop();
    const queue = new RedisAckQueueService({
      connection: fx.connectionWith({ password: '', port }),
      connectTimeoutMs: 500,
    });
    expectLogs(/Cannot connect to Redis at .*(ECONNREFUSED|refresh slots)/);
    const baselineMs = await goodConnectMs();
    const started = Date.now();
    const target = onCluster ? `cluster(127.0.0.1:${port})` : `redis://127.0.0.1:${port}/0`;
    await expect(queue.connect()).rejects.toThrow(`Cannot connect to Redis at ${target}`);
    // Its own 500 ms, not the default connect timeout.
    expect(Date.now() - started).toBeLessThan(baselineMs + 500 + wellBefore(DEFAULTS.connectTimeoutMs - 500));
    // Every later call fails typed, naming what it tried, instead of ioredis' "Connection is closed."
    const pushed = queue.push(uniqueTopic(), SECRET_PAYLOAD);
    await expect(pushed).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(pushed).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE', operation: 'push' });
    expectNothingOf(await pushed.catch((e: unknown) => e), 'PAYLOAD-MARKER');
    await expect(queue.stats(uniqueTopic())).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(queue.reserve(uniqueTopic())).rejects.toBeInstanceOf(RedisUnavailableError);
    await queue.close(0);
  });
});
