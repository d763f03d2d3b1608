import { Cluster, Redis } from 'ioredis';
import { InvalidOptionError, QueueClosedError, RedisConnectionError } from '../../errors';
import { redactedCause } from '../../errors/map-redis-error';
import type { RedisAckQueueConnection } from '../../interfaces';
import { checkedConnectionUrl } from './connection-url';
import { DEFAULTS } from '../../common/redis-ack-queue.constants';
import { MESSAGES } from '../../common/redis-ack-queue.messages';

export type RedisClient = Redis | Cluster;

/**
 * Errors after which retrying cannot help: startup fails at once instead of looping. A refused
 * SELECT (a database the server does not have) would otherwise leave the client ready on db 0.
 */
const FATAL_REPLY = /^(NOAUTH|WRONGPASS|NOPERM|ERR (AUTH|invalid password|Client sent AUTH|DB index))/;
/** A database number as ioredis should read it: its parseInt takes `1abc` as 1 and `abc` as NaN. */
const DB_NUMBER = /^(0|[1-9]\d{0,8})$/;

export function isRedisClient(value: unknown): value is RedisClient {
  const v = value as Partial<Redis> | null;
  return (
    typeof v === 'object' && v !== null && typeof v.duplicate === 'function' && typeof v.defineCommand === 'function'
  );
}

/** Opens the command connection, unless the user passed a client (which stays theirs). */
export function openConnection(connection: RedisAckQueueConnection): { client: RedisClient; owned: boolean } {
  if (isRedisClient(connection)) return { client: connection, owned: false };
  // Auto-pipelining sends the commands of one event-loop tick in one write. Reconnects back
  // off to at most 500 ms (ioredis' default grows to 2 s), so a failover is noticed quickly.
  const own = { enableAutoPipelining: true, lazyConnect: true };
  const retryStrategy = (attempt: number) => Math.min(attempt * 50, 500);
  if (typeof connection === 'string') {
    const url = checkedConnectionUrl(connection);
    assertDatabase(databaseOfUrl(url));
    return { client: new Redis(url, { retryStrategy, ...own }), owned: true };
  }
  if (typeof connection !== 'object' || connection === null) {
    throw new InvalidOptionError(
      'connection',
      connection,
      'a redis:// URL, ioredis options, { cluster: [...] } or a client',
    );
  }
  if ('cluster' in connection) {
    const { cluster: nodes, options = {} } = connection;
    if (!Array.isArray(nodes) || nodes.length === 0) {
      throw new InvalidOptionError('connection.cluster', nodes, 'a non-empty array of seed nodes');
    }
    const seeds = nodes.map((node) =>
      typeof node === 'string' ? checkedConnectionUrl(node, 'connection.cluster') : node,
    );
    return { client: new Cluster(seeds, { ...options, ...own }), owned: true };
  }
  if (connection.db !== undefined) assertDatabase(connection.db);
  return { client: new Redis({ retryStrategy, ...connection, ...own }), owned: true };
}

/**
 * The database a connection URL names, as text (undefined for none), read as ioredis reads it:
 * the path of a redis:// URL, else a `db` query parameter. Never the URL itself: it may hold a password.
 */
function databaseOfUrl(url: string): string | undefined {
  if (/^\d+$/.test(url)) return undefined; // a port alone
  const socket = url.startsWith('/') && !url.startsWith('//');
  const withProtocol = /^rediss?:\/\//i.test(url) || url.startsWith('//');
  let parsed: URL;
  try {
    parsed = new URL(
      socket ? `unix://${url}` : url.startsWith('//') ? `redis:${url}` : withProtocol ? url : `redis://${url}`,
    );
  } catch {
    return undefined; // ioredis reports what it cannot parse
  }
  const fromPath = withProtocol && parsed.pathname.length > 1 ? parsed.pathname.slice(1) : undefined;
  return fromPath ?? parsed.searchParams.get('db') ?? undefined;
}

/** A database number: a whole number >= 0 (whether the server has it, connect() finds out). */
function assertDatabase(db: unknown): void {
  if (db === undefined) return;
  const valid =
    typeof db === 'number' ? Number.isSafeInteger(db) && db >= 0 : typeof db === 'string' && DB_NUMBER.test(db);
  if (!valid) throw new InvalidOptionError('connection database', db, 'a whole number >= 0, as in redis://host:6379/0');
}

/**
 * A connection of its own for a consumer's blocking waits (a blocked connection can
 * serve nothing else). Commands wait through outages instead of failing, and a wait
 * that outlives its timeout on a dead socket is cut on the client side.
 */
export function openBlockingConnection(client: RedisClient, name: string): RedisClient {
  const options = {
    enableAutoPipelining: false,
    maxRetriesPerRequest: null,
    // A safety net only: a wait queued while offline, or one on a dead socket, gives up
    // after this; a live wait ends by its own timeout plus the grace.
    blockingTimeout: DEFAULTS.idleWaitMs * 2,
    blockingTimeoutGrace: 2_000,
    // A user's client may carry a commandTimeout shorter than a wait: never on this connection.
    commandTimeout: undefined,
    connectionName: name,
  };
  const blocking =
    client instanceof Cluster
      ? client.duplicate(undefined, { enableAutoPipelining: false, redisOptions: options })
      : client.duplicate(options);
  // Its failures surface through the poller's waits (which pause and retry), not as events.
  blocking.on('error', () => undefined);
  return blocking;
}

/** Where the client points, without credentials: safe for logs and errors. */
export function describeTarget(client: RedisClient): string {
  if (client instanceof Cluster) {
    const nodes = client.nodes().map((node) => `${node.options.host}:${node.options.port}`);
    // Before the first slots refresh, or after a failed one, it knows only its seeds.
    return `cluster(${(nodes.length > 0 ? nodes : seedAddresses(client)).join(',') || 'no nodes yet'})`;
  }
  const { host = '127.0.0.1', port = 6379, path, db = 0, tls, sentinels, name } = client.options;
  if (sentinels?.length) {
    return `sentinel(${name ?? 'mymaster'}@${sentinels.map((s) => `${s.host ?? '127.0.0.1'}:${s.port ?? 26379}`).join(',')})`;
  }
  return path ? `unix:${path}` : `${tls ? 'rediss' : 'redis'}://${host}:${port}/${db}`;
}

/** Whether the client speaks TLS to Redis (`rediss://`, `tls` options, a Cluster's `redisOptions.tls`). */
export function usesTls(client: RedisClient): boolean {
  const tls = client instanceof Cluster ? client.options.redisOptions?.tls : client.options.tls;
  return tls !== undefined && tls !== null && (tls as unknown) !== false;
}

/** host:port of each seed node (ioredis keeps them in a private field); never credentials. */
function seedAddresses(cluster: Cluster): string[] {
  const seeds = (cluster as unknown as { startupNodes?: unknown[] }).startupNodes;
  return (Array.isArray(seeds) ? seeds : []).map((seed) => {
    if (typeof seed === 'number') return `127.0.0.1:${seed}`;
    if (typeof seed === 'string') {
      const url = new URL(seed.includes('://') ? seed : `redis://${seed}`);
      return `${url.hostname}:${url.port || 6379}`;
    }
    const { host = '127.0.0.1', port = 6379 } = seed as { host?: string; port?: number };
    return `${host}:${port}`;
  });
}

/**
 * Resolves once the client is ready; fails fast on bad credentials and after `timeoutMs`
 * when Redis does not answer, so a wrong URL or password fails startup instead of hanging;
 * fails at once when the client ends first (closed, or given up by its retry strategy): it
 * will never be ready.
 */
export async function waitUntilReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  const target = describeTarget(client);
  if (client.status === 'wait') client.connect().catch(() => undefined);
  let lastError: Error | undefined;
  await new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      client.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => finish();
    // Closed (or given up by its retry strategy): the reason Redis gave, if any, else the close.
    const onEnd = () =>
      finish(
        lastError
          ? new RedisConnectionError(target, MESSAGES.connectFailed(target, lastError.message), {
              cause: redactedCause(lastError),
            })
          : new QueueClosedError('connect'),
      );
    const onError = (failure: Error) => {
      // A Cluster reports "Failed to refresh slots cache."; the reason is the last seed's own error.
      const error = (failure as { lastNodeError?: Error | null }).lastNodeError ?? failure;
      lastError = error;
      if (FATAL_REPLY.test(error.message))
        finish(
          new RedisConnectionError(target, MESSAGES.connectFailed(target, error.message), {
            cause: redactedCause(error),
          }),
        );
    };
    const timer = setTimeout(() => {
      const message = lastError
        ? MESSAGES.connectFailed(target, `${lastError.message} (for ${timeoutMs} ms)`)
        : MESSAGES.connectTimeout(target, timeoutMs);
      finish(new RedisConnectionError(target, message, { cause: redactedCause(lastError) }));
    }, timeoutMs);
    client.on('ready', onReady);
    client.on('error', onError);
    client.on('end', onEnd);
  });
}
