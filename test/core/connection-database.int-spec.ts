import { InvalidOptionError, RedisAckQueueService, RedisConnectionError } from '../../lib';
import { singleServerOnly, uniqueTopic, useRedis } from '../support/queue-fixture';

/** A database in the connection: a malformed one is refused at construction, a missing one fails connect(). */
singleServerOnly('a Cluster has database 0 only').describe('the database of a connection', () => {
  const fx = useRedis();
  const url = (path: string) => `redis://127.0.0.1:${fx.server.port}${path}`;

  it.each(['/abc', '/-1', '/1.5', '/1abc', '/?db=x', '?db=-2'])('refuses %s before any command', async (path) => {
    const before = await fx.redis.dbsize();
    let thrown: unknown;
    try {
      new RedisAckQueueService({ connection: url(path) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError);
    expect((thrown as Error).message).toMatch(/^Invalid connection database .*: expected a whole number >= 0/);
    expect(await fx.redis.dbsize()).toBe(before);
  });

  it('refuses a malformed db in ioredis options', () => {
    for (const db of [-1, 1.5, NaN, 'x' as never]) {
      expect(() => new RedisAckQueueService({ connection: { port: fx.server.port, db } })).toThrow(InvalidOptionError);
    }
  });

  it('fails connect() at once when the server has no such database, instead of using database 0', async () => {
    const queue = new RedisAckQueueService({ connection: url('/99'), connectTimeoutMs: 30_000, logLevel: 'silent' });
    const started = Date.now();
    const failure = queue.connect();
    await expect(failure).rejects.toBeInstanceOf(RedisConnectionError);
    await expect(failure).rejects.toThrow(/DB index is out of range/);
    // Refused on the server's answer, not after the 30 s connect timeout.
    expect(Date.now() - started).toBeLessThan(30_000);
    await expect(queue.push(uniqueTopic(), 1)).rejects.toThrow();
    await queue.close();
    expect(await fx.redis.dbsize()).toBe(0);
  });

  it('uses the database the URL names', async () => {
    const queue = await fx.service({ connection: url('/3') });
    const topic = uniqueTopic();
    await queue.push(topic, 1);
    const other = fx.server.client();
    await other.select(3);
    expect(await other.exists(`{ackq:${topic}}:messages`)).toBe(1);
    expect(await fx.redis.exists(`{ackq:${topic}}:messages`)).toBe(0);
    other.disconnect();
  });
});
