import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { RedisAckQueueService, RedisUnavailableError } from '../../lib';
import { expectLogs, loggedLines } from '../support/capture-logs';
import type { RedisServer } from '../../support/redis-processes/redis-server';
import { eventually, onCluster, singleServerOnly, uniqueTopic, useRedis } from '../support/queue-fixture';
import { quietFor, untilConsumerBlocked } from '../support/waits';

/** A payload no error may carry. */
const SECRET = { card: 'PAYLOAD-MARKER-4111' };
/**
 * Runs `calls` at once; expects each to reject with RedisUnavailableError by the end of the turn
 * in which a timer of `boundMs`, set just after them, fired: the bound holds exactly as well as
 * this machine keeps time right now, busy or not, with no margin guessed. (The calls' own timers,
 * set first, expire no later than this one, and Node runs timers in that order; each expiry waits
 * for that turn's socket reads, so an answer already there wins, and this check waits as long.)
 */
async function failures(
  boundMs: number,
  calls: (() => Promise<unknown>)[],
): Promise<{ error: RedisUnavailableError; ms: number }[]> {
  const started = performance.now();
  const settled: ({ error: unknown; ms: number } | undefined)[] = calls.map(() => undefined);
  const all = Promise.all(
    calls.map((call, i) =>
      call().then(
        () => (settled[i] = { error: new Error('resolved during the outage'), ms: performance.now() - started }),
        (error: unknown) => (settled[i] = { error, ms: performance.now() - started }),
      ),
    ),
  );
  await new Promise((resolve) => setTimeout(() => setImmediate(resolve), boundMs));
  const late = calls.filter((_, i) => settled[i] === undefined).map(String);
  if (late.length > 0)
    throw new Error(`still pending when a ${boundMs} ms timer set after them fired: ${late.join(', ')}`);
  await all;
  return settled.map((outcome, i) => {
    const { error, ms } = outcome!;
    if (!(error instanceof RedisUnavailableError))
      throw new Error(
        `${String(calls[i])}: expected RedisUnavailableError, got after ${Math.round(ms)} ms ${inspect(error)}`,
      );
    expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain('PAYLOAD-MARKER');
    // Not early either (timers may fire up to 1 ms before performance.now() says).
    expect(ms).toBeGreaterThanOrEqual(boundMs - 5);
    return { error, ms };
  });
}

/** One call: `failures` of it alone. */
async function failure(boundMs: number, call: () => Promise<unknown>): Promise<{ error: RedisUnavailableError }> {
  const [outcome] = await failures(boundMs, [call]);
  return outcome;
}

describe('outages: every call rejects within commandTimeoutMs, consumers resume by themselves', () => {
  const fx = useRedis();
  // Restarted servers come back empty (no persistence): reported too.
  expectLogs(/^Lost the connection to Redis/, /^Consumer of ".*" paused/, /came back without the data/);
  /** The server that holds `topic` (on the cluster: its master). */
  const serving = async (topic: string): Promise<RedisServer> =>
    onCluster ? fx.cluster.nodeForKey(`{ackq:${topic}}`) : fx.server;
  // A test that failed while Redis was frozen leaves it running for the next one.
  afterEach(() => (onCluster ? fx.cluster.servers : [fx.server]).forEach((server) => server.resume()));
  const killsTheServer = singleServerOnly('kills the one server; the frozen-master test covers the cluster');

  killsTheServer.it(
    'a killed server: each call rejects within the bound naming its operation; after a restart the same service and its consumer work again',
    async () => {
      const queue = await fx.service({ commandTimeoutMs: 300 });
      // Set up through a service with the default bound: only the calls during the outage are the point.
      const setup = await fx.service();
      const topic = uniqueTopic();
      const seen: unknown[] = [];
      const consumer = queue.consume(topic, (payload) => void seen.push(payload));
      await setup.push(topic, 'before');
      await eventually(() => seen.length === 1);
      const held = uniqueTopic();
      await setup.push(held, 'held');
      const [message] = await setup.reserve<string>(held);
      const unchecked = uniqueTopic();

      await fx.server.kill();
      try {
        const calls: [operation: string, topic: string | undefined, call: () => Promise<unknown>][] = [
          ['push', topic, () => queue.push(topic, SECRET, { id: 'during-outage' })],
          ['push', topic, () => queue.pushMany(topic, [{ payload: SECRET }, { payload: SECRET }])],
          ['reserve', topic, () => queue.reserve(topic)],
          ['ack', held, () => queue.ack(message)],
          ['nack', held, () => queue.nack(message, { error: new Error('failed') })],
          ['extend a lease', held, () => queue.extendLease(message, 10_000)],
          ['release', held, () => queue.release(message)],
          ['read stats', topic, () => queue.stats(topic)],
          ['read dead letters', topic, () => queue.deadLetters(topic)],
          ['requeue dead letters', topic, () => queue.requeueDead(topic)],
          ['purge dead letters', topic, () => queue.purgeDead(topic, ['x'])],
          // A topic not checked yet (a checked one is known and needs no Redis).
          ['check a topic', unchecked, () => queue.checkTopic(unchecked)],
          ['ping', undefined, () => queue.ping()],
          ['read stats', topic, () => queue.waitUntilIdle(topic)],
        ];
        for (const [operation, where, call] of calls) {
          const { error } = await failure(300, call);
          expect({ operation: error.operation, topic: error.topic }).toEqual({ operation, topic: where });
          expect(error.message).toContain(
            `Cannot ${operation}${where ? ` on topic "${where}"` : ''}: Redis is unavailable`,
          );
          expect(error.message).toContain('no answer within 300 ms, the commandTimeoutMs');
          expect(error.message).toContain('may still take effect when Redis returns');
          // Advice to retry a push with its id only where there is a push.
          expect(error.message.includes('deduplicated')).toBe(operation === 'push');
        }
        // A bound given to ping is named as such, not as the commandTimeoutMs.
        const { error: pinged } = await failure(200, () => queue.ping(200));
        expect(pinged.message).toContain('no answer within 200 ms, the timeout given to ping;');
      } finally {
        await fx.server.restart();
      }
      // ioredis reconnects within 500 ms; until then (and on a loaded machine, now and then
      // after) a call may still time out: the service works again once a push goes through.
      // The same id each time, so a push that timed out but ran is not stored twice.
      await eventually(
        () =>
          queue.push(topic, 'after', { id: 'after' }).then(
            () => true,
            () => false,
          ),
        10_000,
        50,
      );
      // The consumer resumed by itself (its own calls were never bound by commandTimeoutMs).
      await eventually(() => seen.includes('after'), 10_000);
      expect(seen[0]).toBe('before');
      await consumer.close(0);
    },
  );

  it('a frozen server (SIGSTOP, sockets open): push, stats, reserve and ping reject within the bound; the push still runs when Redis resumes', async () => {
    const queue = await fx.service({ commandTimeoutMs: 300 });
    // Set up and read back through a service with the default bound: only the frozen calls are the point.
    const checker = await fx.service();
    const topic = uniqueTopic();
    await checker.push(topic, 'first');
    // Connected to the node it will call (on a loaded machine a call may outlast 300 ms: retried).
    await eventually(
      () =>
        queue.stats(topic).then(
          () => true,
          () => false,
        ),
      10_000,
    );
    const server = await serving(topic);
    server.pause();
    let results: { error: RedisUnavailableError }[];
    try {
      // At once: on the cluster a master frozen past cluster-node-timeout (2 s) would be failed over.
      results = await failures(300, [
        () => queue.push(topic, SECRET, { id: 'timed-out' }),
        () => queue.stats(topic),
        () => queue.reserve(topic),
        () => queue.ping(),
      ]);
    } finally {
      server.resume();
    }
    expect(results.map(({ error }) => error.operation)).toEqual(['push', 'read stats', 'reserve', 'ping']);
    // Not withdrawn: the push that timed out was stored once Redis resumed (and the reserve
    // that timed out leased 'first'); a retry with the same id is deduplicated.
    await eventually(async () => {
      const { ready, leased } = await checker.stats(topic);
      return ready + leased === 2;
    }, 10_000);
    await expect(checker.push(topic, SECRET, { id: 'timed-out' })).resolves.toEqual({
      id: 'timed-out',
      duplicate: true,
    });
  });

  it('a consumer is not bound by commandTimeoutMs: its reserve in flight through a freeze returns its message when Redis resumes', async () => {
    const queue = await fx.service({ commandTimeoutMs: 100 });
    // The push through a service with the default bound: the 100 ms are the consumer's to ignore.
    const producer = await fx.service();
    const topic = uniqueTopic();
    const seen: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void seen.push(payload), { leaseMs: 20_000 });
    await untilConsumerBlocked(fx.nodes(), topic);
    // Due while Redis is frozen: the consumer's reserve at the due time waits in the frozen socket.
    await producer.push(topic, 'due', { delayMs: 200 });
    const server = await serving(topic);
    server.pause();
    try {
      await quietFor(1_000, 'Redis answers nothing');
    } finally {
      server.resume();
    }
    // A reserve cut after 100 ms would still run and lease 'due' to nobody, for 20 s.
    await eventually(() => seen.length === 1, 5_000);
    expect(seen).toEqual(['due']);
    await consumer.close(0);
  });

  const ownClient = singleServerOnly('a plain ioredis client of the one server');
  ownClient.it(
    "a client the user passed in is bound too, and its commandTimeout never cuts a consumer's blocking wait",
    async () => {
      // The client's own commandTimeout is the user's business; the consumer's blocking waits run
      // on a duplicate without it.
      const client = new Redis({ port: fx.server.port, host: '127.0.0.1', commandTimeout: 300, lazyConnect: true });
      client.on('error', () => undefined);
      try {
        const queue = await fx.service({ connection: client, commandTimeoutMs: 400 });
        const topic = uniqueTopic();
        const seen: unknown[] = [];
        const consumer = queue.consume(topic, (payload) => void seen.push(payload));
        await untilConsumerBlocked(fx.nodes(), topic);
        // Waits block for up to 5 s, far beyond the client's commandTimeout of 300 ms.
        await quietFor(1_500, "a blocking wait cut by the client's commandTimeout");
        expect(loggedLines(/paused/)).toEqual([]);
        await queue.push(topic, 'woken');
        await eventually(() => seen.length === 1);
        await consumer.close(0);

        // Without a commandTimeout of its own, such a client waits on a frozen server for good.
        client.options.commandTimeout = undefined;
        fx.server.pause();
        try {
          const { error } = await failure(400, () => queue.push(topic, SECRET));
          expect(error.operation).toBe('push');
        } finally {
          fx.server.resume();
        }
      } finally {
        client.disconnect();
      }
    },
  );

  killsTheServer.it('by default a call rejects after 5 s', async () => {
    // The library's default, not the fixture's longer bound.
    const queue = await fx.service({ commandTimeoutMs: undefined });
    const topic = uniqueTopic();
    await queue.push(topic, 'first');
    await fx.server.kill();
    try {
      const { error } = await failure(5_000, () => queue.push(topic, SECRET));
      expect(error.message).toContain('no answer within 5000 ms');
    } finally {
      await fx.server.restart();
    }
  });

  it('ping answers the round trip in ms; on a cluster it asks every master', async () => {
    const queue = await fx.service();
    const masters = onCluster ? (await fx.cluster.masters()).map((server) => server.client()) : [fx.redis as Redis];
    const pings = () =>
      Promise.all(
        masters.map(async (node) => Number(/cmdstat_ping:calls=(\d+)/.exec(await node.info('commandstats'))?.[1] ?? 0)),
      );
    await queue.ping();
    const before = await pings();
    // The round trip alone: more than nothing, no more than the call took as seen from here.
    const started = performance.now();
    const ms = await queue.ping();
    const wall = performance.now() - started;
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(wall);
    const after = await pings();
    expect(after.map((count, i) => count - before[i])).toEqual(masters.map(() => 1));
  });

  it('ping on a closed service rejects with QueueClosedError', async () => {
    const queue = new RedisAckQueueService({ connection: fx.connection });
    await queue.close(0);
    await expect(queue.ping()).rejects.toMatchObject({ code: 'QUEUE_CLOSED', operation: 'ping' });
  });
});
