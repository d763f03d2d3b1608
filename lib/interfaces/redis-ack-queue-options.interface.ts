import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { BackoffOption } from './backoff.interface';

/** A Redis Cluster the queue connects to (and closes) itself: its seed nodes and ioredis options. */
export interface RedisAckQueueClusterConnection {
  cluster: ClusterNode[];
  options?: ClusterOptions;
}

/**
 * Where Redis is: a `redis://` or `rediss://` URL, ioredis options (Sentinel included:
 * `{ sentinels, name }`), a cluster's seed nodes, or a client you own. A client you pass
 * in is used as it is and never closed by the queue; blocking waits run on duplicates of
 * it, which the queue owns and closes.
 */
export type RedisAckQueueConnection = string | RedisOptions | RedisAckQueueClusterConnection | Redis | Cluster;

/** Settings every consumer of a topic falls back to when its handler sets none. */
export interface QueueHandlerDefaults {
  /** How long a lease lasts before the message may be delivered again (ms). Default 30 s. */
  leaseMs?: number;
  /** Deliveries allowed before a failing message goes to dead letters. Default 5. */
  maxAttempts?: number;
  /** Wait before a failed message is tried again. Default: exponential from 1 s with jitter. */
  backoff?: BackoffOption;
  /** Handlers that may run at once per topic in this process. Default 1. */
  concurrency?: number;
  /** Most messages one reserve call takes (bounded by free concurrency). Default 50. */
  batchSize?: number;
  /** A handler still running after this long fails the delivery and is aborted (ms). Default: none. */
  timeoutMs?: number;
}

/** How one topic is laid out in Redis; producers and consumers of the topic must agree. */
export interface TopicOptions {
  /**
   * Spread the topic over this many hash slots (1-256), so a busy topic uses every master of
   * a Redis Cluster. Messages go to a partition by a hash of their id. Default 1. Changing it
   * for a topic that still holds messages is refused: drain the topic first.
   */
  partitions?: number;
}

/**
 * How much the queue logs through Nest's Logger (context `RedisAckQueue`), from least to most:
 * `silent` nothing; `error` dead letters; `warn` also retries, lost leases, lost connections,
 * messages released at shutdown and unsafe Redis settings; `log` also consumers starting,
 * shutdown drains and connections restored. No line ever holds a payload.
 */
export type RedisAckQueueLogLevel = 'silent' | 'error' | 'warn' | 'log';

/** Options of `RedisAckQueueService` and of `RedisAckQueueModule.forRoot()`. */
export interface RedisAckQueueOptions extends QueueHandlerDefaults {
  /** Default `redis://127.0.0.1:6379`. */
  connection?: RedisAckQueueConnection;
  /** Namespace of every key: keys are `{<prefix>:<topic>}:<part>`. Default `ackq`. */
  prefix?: string;
  /** Largest payload accepted, as JSON bytes. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** How long shutdown waits for running handlers before releasing them (ms). Default 10 s. */
  drainMs?: number;
  /** How long startup waits for Redis before failing (ms). Default 5 s. */
  connectTimeoutMs?: number;
  /**
   * Bound on each topic's dead letters, so Redis memory cannot grow without limit: the
   * oldest beyond `maxCount`, or older than `maxAgeMs`, are deleted. Default 10,000 and 14 days.
   */
  deadLetters?: { maxCount?: number; maxAgeMs?: number };
  /**
   * Start even when Redis may evict keys (`maxmemory-policy` allkeys-*), which can lose
   * messages silently. Default false: startup fails with an explanation.
   */
  allowEviction?: boolean;
  /** Per-topic layout, by topic name: `{ orders: { partitions: 6 } }`. */
  topics?: Record<string, TopicOptions>;
  /**
   * A push resolves only once `replicas` replicas have it (Redis `WAIT`), so a failover to a
   * replica cannot lose it; when they do not confirm within `timeoutMs` (default 1 s) the push
   * rejects with ReplicationTimeoutError (the message may still be stored: push it again with
   * the same id, which is deduplicated). Default: off (Redis replicates asynchronously).
   */
  replicatedPushes?: { replicas: number; timeoutMs?: number };
  /**
   * The least severe level the queue logs: `'silent'`, `'error'`, `'warn'` or `'log'`.
   * Default `'warn'`: dead letters, retries and trouble, no routine lines. The app's own
   * logger settings (e.g. `NestFactory.create(..., { logger })`) filter on top of this.
   */
  logLevel?: RedisAckQueueLogLevel;
}

/** Module options: the service options plus what only a Nest app has. */
export interface RedisAckQueueModuleOptions extends RedisAckQueueOptions {
  /** `false` runs no @QueueHandler in this process (a producer-only app). Default true. */
  consumers?: boolean;
}
