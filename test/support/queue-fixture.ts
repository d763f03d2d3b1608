import { Cluster, type Redis } from 'ioredis';
import { RedisAckQueueService, type RedisAckQueueConnection, type RedisAckQueueOptions } from '../../lib';
import { RedisCluster } from '../../support/redis-processes/redis-cluster';
import { RedisServer, type RedisServerOptions } from '../../support/redis-processes/redis-server';

/** A client of either topology: a plain client of one server, or a Cluster client. */
export type TestClient = Redis | Cluster;

/** Which Redis the suites run against: one server, or a 3-master cluster (the `cluster` Jest project). */
export const onCluster = (globalThis as { ACKQ_TOPOLOGY?: string }).ACKQ_TOPOLOGY === 'cluster';

let topicCounter = 0;

/** A fresh topic name per test, so tests never see each other's messages. */
export function uniqueTopic(name = 'topic'): string {
  return `${name}.${process.pid}.${++topicCounter}`;
}

/**
 * For the few tests that need one plain server by nature: on the cluster they are skipped,
 * with their reason in the test name.
 */
export function singleServerOnly(reason: string) {
  const label = (name: string) => `${name} [single server only: ${reason}]`;
  return {
    it: (name: string, fn: jest.ProvidesCallback, timeout?: number) =>
      onCluster ? it.skip(label(name), fn) : it(name, fn, timeout),
    describe: (name: string, fn: () => void) => (onCluster ? describe.skip(label(name), fn) : describe(name, fn)),
  };
}

/** The commandTimeoutMs of the fixture's services: a bound against a hang, not a measure of speed. */
const TEST_COMMAND_TIMEOUT_MS = 30_000;

/**
 * Starts one private Redis for a test file (one redis-server, or a cluster of six in the
 * `cluster` project) and hands out services bound to it; everything is closed and removed
 * after the file.
 */
export function useRedis(serverOptions: RedisServerOptions = {}) {
  const nodeClients = new Map<RedisServer, Redis>();
  const fixture = {
    /** The one server (single-server runs only). */
    server: undefined as unknown as RedisServer,
    /** The cluster (cluster runs only). */
    cluster: undefined as unknown as RedisCluster,
    /** A client for inspecting and damaging state. */
    redis: undefined as unknown as TestClient,
    services: [] as RedisAckQueueService[],
    /** How the library reaches this Redis, for tests that build services or modules themselves. */
    get connection(): RedisAckQueueConnection {
      return fixture.connectionWith({});
    },
    /** The same kind of connection with other credentials, or to another (seed) port. */
    connectionWith(o: { username?: string; password?: string; port?: number }): RedisAckQueueConnection {
      const { username, password = serverOptions.password, port } = o;
      if (onCluster) {
        const redisOptions = { ...(username ? { username } : {}), ...(password ? { password } : {}) };
        return { cluster: port ? [{ host: '127.0.0.1', port }] : fixture.cluster.seeds, options: { redisOptions } };
      }
      const auth = password ? `${encodeURIComponent(username ?? '')}:${encodeURIComponent(password)}@` : '';
      return `redis://${auth}127.0.0.1:${port ?? fixture.server.port}`;
    },
    /** Env for consumer processes (test/support/consumer-process.js). */
    get consumerEnv(): Record<string, string> {
      if (onCluster)
        return { REDIS_CLUSTER: fixture.cluster.seeds.map((node) => `${node.host}:${node.port}`).join(',') };
      return { REDIS_URL: fixture.server.url };
    },
    /** A new client the test owns (closed after the file). */
    client(): TestClient {
      return onCluster ? fixture.cluster.client() : fixture.server.client();
    },
    /** A plain client of every redis-server, for what is set per server (CONFIG, ACL, CLIENT). */
    nodes(): Redis[] {
      if (!onCluster) return [fixture.redis as Redis];
      return fixture.cluster.servers.map((server) => {
        if (!nodeClients.has(server)) nodeClients.set(server, server.client());
        return nodeClients.get(server)!;
      });
    },
    /** Kills and restarts the server that holds `key` (on the cluster: the master of its slot). */
    async restartServing(key: string): Promise<void> {
      await (onCluster ? await fixture.cluster.nodeForKey(key) : fixture.server).restart();
    },
    /** What the test built on this Redis (apps, clients): closed after the file, before the services and Redis. */
    closers: [] as (() => Promise<unknown>)[],
    /**
     * Closes every service made so far, so that a test counting Redis commands sees only its own:
     * each service's history recorder sends what it counted within a second (and at close).
     */
    async closeServices(): Promise<void> {
      await Promise.all(fixture.services.map((service) => service.close(0)));
    },
    /**
     * A service on this Redis. Its calls wait up to 30 s, not the library's 5 s: a loaded machine
     * can hold a first call on a fresh cluster past 5 s, and a test that checks the bound sets its own.
     */
    async service(options: RedisAckQueueOptions = {}): Promise<RedisAckQueueService> {
      const service = new RedisAckQueueService({
        connection: fixture.connection,
        commandTimeoutMs: TEST_COMMAND_TIMEOUT_MS,
        ...options,
      });
      fixture.services.push(service);
      await service.connect();
      return service;
    },
  };
  beforeAll(async () => {
    if (onCluster) {
      const { password, appendonly, config } = serverOptions;
      // No failover unless a test makes one: a master starved for the default 2 s on a loaded
      // machine would be replaced by its replica mid-test (fault tests that want one start their own).
      fixture.cluster = await RedisCluster.start({ password, appendonly, config, nodeTimeoutMs: 15_000 });
      fixture.redis = fixture.cluster.client();
    } else {
      fixture.server = await RedisServer.start(serverOptions);
      fixture.redis = fixture.server.client();
    }
  });
  afterAll(async () => {
    for (const close of fixture.closers.reverse()) await close();
    await Promise.all(fixture.services.map((service) => service.close(0)));
    await fixture.server?.stop();
    await fixture.cluster?.stop();
  });
  return fixture;
}

/** The masters the client knows (the one server for a plain client). */
export async function mastersOf(redis: TestClient): Promise<Redis[]> {
  if (!(redis instanceof Cluster)) return [redis];
  // Before it is ready a Cluster client knows no node, and a snapshot would be empty.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis.nodes('master');
}

/**
 * The entry reserve keeps in a topic's leased ZSET and tokens HASH (prelude.lua) so that Redis
 * keeps them in their hashed encodings: no trace of a message, so snapshots leave it out.
 */
export const ENCODING_ANCHOR = '~'.repeat(257);

/**
 * A topic's history hash (`{<prefix>:<topic>}:history`) and its usage per group (`...:group-usage`
 * and the open minute's `...:group-usage:<minute>`): every process's history recorder adds to them
 * once a second, on its own timer, so they may change between any two reads of a test.
 */
export function isHistoryKey(key: string): boolean {
  return /\}:(history|group-usage(:\d+)?)$/.test(key);
}

/**
 * Every key of a topic (of all its partitions) with its full content: equal snapshots mean nothing changed.
 * The history hash is left out (a recorder's flush may land between two snapshots on a busy machine) unless
 * `history: true`, for the tests of history itself.
 */
export async function snapshotTopic(
  redis: TestClient,
  topic: string,
  prefix = 'ackq',
  { history = false }: { history?: boolean } = {},
): Promise<Record<string, unknown>> {
  // KEYS answers for one node only: ask every master and merge.
  const keys = (await Promise.all((await mastersOf(redis)).map((node) => node.keys(`{${prefix}:${topic}[}#]*`))))
    .flat()
    .filter((key) => history || !isHistoryKey(key))
    .sort();
  const snapshot: Record<string, unknown> = {};
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'list') snapshot[key] = await redis.lrange(key, 0, -1);
    else if (type === 'zset') {
      const scored = await redis.zrange(key, '0', '-1', 'WITHSCORES');
      const anchor = scored.indexOf(ENCODING_ANCHOR);
      if (anchor >= 0) scored.splice(anchor, 2);
      if (scored.length > 0) snapshot[key] = scored;
    } else if (type === 'hash') {
      const fields = await redis.hgetall(key);
      delete fields[ENCODING_ANCHOR];
      if (Object.keys(fields).length > 0) snapshot[key] = fields;
    } else if (type === 'string') snapshot[key] = await redis.get(key);
    else snapshot[key] = type;
  }
  return snapshot;
}

/** Polls `check` until it returns a truthy value; for states that no event announces. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Server-side command counts (summed over the masters), to prove how many round trips an operation costs. */
export async function commandCounts(redis: TestClient): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const node of await mastersOf(redis)) {
    const info = await node.info('commandstats');
    for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g))
      counts[match[1]] = (counts[match[1]] ?? 0) + Number(match[2]);
  }
  return counts;
}
