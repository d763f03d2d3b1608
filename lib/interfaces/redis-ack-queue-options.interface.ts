import type { OutboxOptions } from './outbox.interface';
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { BackoffOption } from './backoff.interface';
import type { ScheduleDefinition } from './queue-schedule-api.interface';
import type { KeepCompletedOptions } from './queue-lookup-api.interface';
import type { TopicOptions } from './topic-limits.interface';
import type { Codec } from './codec.interface';

/** A Redis Cluster the queue connects to (and closes) itself: its seed nodes and ioredis options. */
export interface RedisAckQueueClusterConnection {
  /** Seed nodes (at least one): the cluster's other nodes are found from them. */
  cluster: ClusterNode[];
  /** ioredis' Cluster options; the queue sets `enableAutoPipelining` and `lazyConnect` itself. */
  options?: ClusterOptions;
}

/**
 * Where Redis is: a `redis://` or `rediss://` URL (also `unix:///path/to/redis.sock`, a socket
 * path, or `host:port`; any other scheme is refused at once), ioredis options (Sentinel included:
 * `{ sentinels, name }`), a cluster's seed nodes, or a client you own. A client you pass
 * in is used as it is and never closed by the queue; blocking waits run on duplicates of
 * it, which the queue owns and closes.
 */
export type RedisAckQueueConnection = string | RedisOptions | RedisAckQueueClusterConnection | Redis | Cluster;

/** Settings every consumer of a topic falls back to when its handler sets none. */
export interface QueueHandlerDefaults {
  /**
   * How long a lease lasts before the message may be delivered again (ms, 10 to 2^31-1).
   * While a consumer's handler runs, heartbeats extend it every third of it.
   * @defaultValue `30_000` (30 s)
   */
  leaseMs?: number;
  /**
   * Deliveries allowed before a failing message goes to dead letters (1-1,000,000).
   * @defaultValue `5`
   */
  maxAttempts?: number;
  /**
   * Wait before a failed message is tried again.
   * @defaultValue exponential from 1 s, jitter 0.5, capped at one hour
   */
  backoff?: BackoffOption;
  /**
   * Handlers that may run at once per topic in this process (1-10,000).
   * @defaultValue `1`
   */
  concurrency?: number;
  /**
   * Most messages one reserve call takes (bounded by free concurrency; 1-1000).
   * @defaultValue `50`
   */
  batchSize?: number;
  /**
   * A handler still running after this long fails the delivery with HandlerTimeoutError and
   * its `signal` aborts (ms, 1 to 2^31-1).
   * @defaultValue none: no time limit
   */
  timeoutMs?: number;
  /**
   * Times one message may be deferred (`context.retryLater` or `RetryLaterError`) without
   * counting an attempt (0-1,000,000); past it, a deferral counts as a failed attempt.
   * @defaultValue `100`
   */
  maxDeferrals?: number;
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
  /**
   * Where Redis is (see {@link RedisAckQueueConnection}). Left out, the service uses the default
   * and warns once: a local Redis may be one other apps (or tests) share.
   * @defaultValue `'redis://127.0.0.1:6379'`
   */
  connection?: RedisAckQueueConnection;
  /**
   * Namespace of every key: keys are `{<prefix>:<topic>}:<part>`. 1-100 characters of
   * `A-Z a-z 0-9 . _ - :`.
   * @defaultValue `'ackq'`
   */
  prefix?: string;
  /**
   * Largest payload accepted, as JSON bytes with its headers' JSON (1 to 512 MiB).
   * @defaultValue `1_048_576` (1 MiB)
   */
  maxPayloadBytes?: number;
  /**
   * How long shutdown waits for running handlers before releasing them (ms).
   * @defaultValue `10_000` (10 s)
   */
  drainMs?: number;
  /**
   * How long startup waits for Redis before failing (ms); bad credentials fail at once.
   * @defaultValue `5_000` (5 s)
   */
  connectTimeoutMs?: number;
  /**
   * Longest wait of every call of the service (push, reserve, ack, stats, ping...) for Redis:
   * when Redis does not answer within it (down, unreachable, frozen), the call rejects with
   * RedisUnavailableError naming the operation. The command may still run when Redis returns
   * (retry a push with the same id: deduplicated). Consumers are not bound by it: they pause
   * and resume by themselves. A replicated push gets `replicatedPushes.timeoutMs` on top. Default 5 s.
   */
  commandTimeoutMs?: number;
  /**
   * Bound on each topic's dead letters, so Redis memory cannot grow without limit: the
   * oldest beyond `maxCount`, or older than `maxAgeMs`, are deleted.
   * @defaultValue `{ maxCount: 10_000, maxAgeMs: 1_209_600_000 }` (14 days)
   * @prop __type.maxCount Most dead letters kept per topic (a whole number >= 0). Default 10,000.
   * @prop __type.maxAgeMs Oldest dead letter kept (ms, a whole number >= 0). Default 14 days.
   */
  deadLetters?: { maxCount?: number; maxAgeMs?: number };
  /**
   * Start even when Redis may evict keys (`maxmemory-policy` allkeys-*), which can lose
   * messages silently. Default false: startup fails with an explanation.
   * @defaultValue `false`
   */
  allowEviction?: boolean;
  /**
   * Keep acked messages for look-up on every topic (see {@link KeepCompletedOptions}): `true`
   * for the defaults (1,000 per topic, 24 h), an object to set the bounds. A topic's own
   * `topics.<name>.keepCompleted` wins. Off by default: an acked message is deleted at once.
   * @defaultValue `false`
   */
  keepCompleted?: boolean | KeepCompletedOptions;
  /** Per-topic layout, by topic name: `{ orders: { partitions: 6 } }`. Default: 1 partition each. */
  topics?: Record<string, TopicOptions>;
  /**
   * A push resolves only once `replicas` replicas have it (Redis `WAIT`), so a failover to a
   * replica cannot lose it; when they do not confirm within `timeoutMs` (default 1 s) the push
   * rejects with ReplicationTimeoutError (the message may still be stored: push it again with
   * the same id, which is deduplicated). Default: off (Redis replicates asynchronously).
   * @defaultValue `undefined` (off)
   * @prop __type.replicas Replicas that must confirm each push (1-100).
   * @prop __type.timeoutMs How long to wait for them (ms, 1 to 2^31-1). Default 1 s.
   */
  replicatedPushes?: { replicas: number; timeoutMs?: number };
  /**
   * The least severe level the queue logs: `'silent'`, `'error'`, `'warn'` or `'log'`.
   * Default `'warn'`: dead letters, retries and trouble, no routine lines but the one each
   * service writes (at Nest's `log` level) when it connects, saying where. The app's own
   * logger settings (e.g. `NestFactory.create(..., { logger })`) filter on top of this.
   */
  logLevel?: RedisAckQueueLogLevel;

  /**
   * OpenTelemetry tracing (needs `@opentelemetry/api`, an optional peer): a push runs in a
   * PRODUCER span whose context goes into each message's headers (`traceparent`), and every
   * handler runs in a CONSUMER span continuing that trace. Spans go to the tracer provider you
   * registered; with none registered they cost next to nothing. An object turns it on with
   * options (see {@link RedisAckQueueTracingOptions}).
   * @defaultValue `false`
   */
  tracing?: boolean | RedisAckQueueTracingOptions;

  /**
   * Whether this process records each topic's history (read by `history()`, the dashboard's
   * charts and the CLI's `history`): what it pushed, acked, retried, dead-lettered and
   * cancelled, and the wait and handling times of its deliveries, counted in memory and added
   * to Redis once a second per topic. `false` records nothing from this process (the others
   * still do). See docs/observability.md for what it costs.
   * @defaultValue `true`
   */
  history?: boolean;

  /**
   * Also append this service's events (type, topic, id, attempt, dead reason; never payloads,
   * headers or error texts) to one capped Redis Stream per prefix, which `fleetEvents$()` in any
   * process reads: the fleet-wide view that `events$` (this process only) is not. Written in
   * batches (one pipeline every 50 ms at most), off the call that made the event; costs one
   * event object per message in consumers and about 100 bytes of Redis memory per entry kept.
   * `true` keeps about 10,000 entries; `{ maxLen }` sets how many. See docs/fleet-events.md.
   * @defaultValue `false`
   */
  fleetEvents?:
    | boolean
    | {
        /** About how many entries the stream keeps (trimmed with `MAXLEN ~`); 10,000 when left out. */
        maxLen?: number;
      };

  /**
   * Whether this service runs the scheduler, which pushes the ticks of every schedule of the
   * prefix (see `upsertSchedule`). It runs while the service has consumers, and from its
   * first `upsertSchedule()` until `close()`; idle, it sends one GET every 2 s. Every running scheduler races
   * for each tick and exactly one wins, so run it in as many processes as you like. `false`:
   * never in this service (it can still change schedules).
   * @defaultValue `true`
   */
  scheduler?: boolean;

  /**
   * The codec of every topic's stored user data (payloads with their headers, results, step
   * results, transport requests and replies, progress; dead letters and completed records keep
   * what was sealed): `createEncryptionCodec`, `createCompressionCodec`, `chainCodecs(...)` or your
   * own. Ids, topics, groups, keys, tags, times and error texts stay readable. See docs/codecs.md.
   * @defaultValue none: values are stored as JSON
   */
  codec?: Codec;

  /**
   * Codecs by topic, over `codec`: a topic's own, or `null` to write its new values as JSON (its
   * values sealed before are still read with `codec`).
   * @defaultValue none
   */
  topicCodecs?: Record<string, Codec | null>;
  /**
   * The transactional outbox (see docs/outbox.md): messages written in the app's own PostgreSQL
   * transaction with `pushInTransaction`, and a relay in this process (unless `relay: false`)
   * that pushes each committed one exactly once. Needs the optional peer `pg` for the relay.
   */
  outbox?: OutboxOptions;
}

/** Module options: the service options plus what only a Nest app has. */
export interface RedisAckQueueModuleOptions extends RedisAckQueueOptions {
  /**
   * `false` runs no `@QueueHandler` in this process (a producer-only app).
   * @defaultValue `true`
   */
  consumers?: boolean;
  /**
   * Schedules upserted at startup, each `{ topic, name, ...options }` (see `upsertSchedule`):
   * an unchanged schedule keeps its pending tick, so every instance may declare the same
   * ones. A bad one fails startup. Schedules left out are not removed.
   */
  schedules?: ScheduleDefinition[];
}

/** Options of the `tracing` option, when given as an object (tracing is then on). */
export interface RedisAckQueueTracingOptions {
  /**
   * One `process <topic>` span per reserved batch of a consumer, with a link per message to
   * its producer's context (attributes `messaging.message.id` and the attempt on each link, and
   * `messaging.batch.message_count` on the span), instead of one span per message: for very
   * high rates, where a span per message costs more than the handler. Every handler of the batch
   * runs in its span, which ends when the last of them settles.
   * @defaultValue `false`
   */
  batchSpans?: boolean;
}
