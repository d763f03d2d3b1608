import type { RedisAckQueueEventType } from '../interfaces';

/** Injection token and metadata keys, namespaced so they never collide with an app's own. */
export const QUEUE_HANDLER_METADATA = 'nestjs-redis-ack-queue:handler';
export const QUEUE_EVENT_METADATA = 'nestjs-redis-ack-queue:event-listener';
/**
 * Metadata on the library's own HTTP controllers (the metrics route, the dashboard), whose value names
 * which: what `isRedisAckQueueRoute()` reads for an app-wide guard.
 */
export const REDIS_ACK_QUEUE_ROUTE = 'nestjs-redis-ack-queue:route';
/**
 * The library's HTTP routes: `RedisAckQueueMetricsModule`'s `path`, `RedisAckQueueDashboardModule`'s
 * and `RedisAckQueueScalingModule`'s.
 */
export type RedisAckQueueRoute = 'metrics' | 'dashboard' | 'scaling';

/** Every type of event `events$` carries. */
export const QUEUE_EVENT_TYPES: readonly RedisAckQueueEventType[] = [
  'pushed',
  'reserved',
  'acked',
  'retried',
  'dead',
  'lease-lost',
  'error',
  'deferred',
  'cancelled',
  'progress',
  'expired',
];

/** What `ExecutionContext.getType()` says in a guard, interceptor, pipe or filter of a @QueueHandler. */
export const REDIS_ACK_QUEUE_CONTEXT_TYPE = 'redis-ack-queue';
/** For `context.getType<RedisAckQueueContextType | ContextType>()` in an enhancer shared with HTTP or RPC. */
export type RedisAckQueueContextType = typeof REDIS_ACK_QUEUE_CONTEXT_TYPE;

/** Default key prefix: every key of a topic lives under the hash tag `{ackq:<topic>}`. */
export const DEFAULT_PREFIX = 'ackq';

/** Defaults for every option a topic, handler or message can override. */
export const DEFAULTS = {
  connection: 'redis://127.0.0.1:6379',
  leaseMs: 30_000,
  maxAttempts: 5,
  maxPayloadBytes: 1024 * 1024,
  concurrency: 1,
  batchSize: 50,
  drainMs: 10_000,
  connectTimeoutMs: 5_000,
  /** Longest wait of a public call (push, stats, ping...) for Redis' answer. */
  commandTimeoutMs: 5_000,
  /** Entries the fleet event stream keeps with `fleetEvents: true` (about 1 MB of Redis memory). */
  fleetEventsMaxLen: 10_000,
  /** Longest blocking wait; bounds how long a dead connection can go unnoticed. */
  idleWaitMs: 5_000,
  backoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: 3_600_000 },
  logLevel: 'warn',
  /** Dead letters kept per topic: the oldest beyond the count, or older than the age, are deleted. */
  deadLetters: { maxCount: 10_000, maxAgeMs: 14 * 24 * 3_600_000 },
  /** Times a message may be deferred (retryLater) without counting an attempt. */
  maxDeferrals: 100,
  /** Completed messages kept per topic once `keepCompleted` is on (per partition). */
  keepCompleted: { maxCount: 1_000, maxAgeMs: 24 * 3_600_000 },
  /** Largest `context.progress` value, as JSON bytes. */
  maxProgressBytes: 4_096,
  /** Messages one page of list() or deadLetters() holds when `limit` is left out. */
  pageLimit: 100,
  /** A handler's progress is written at most this often (ms); the latest value wins. */
  progressIntervalMs: 200,
  /**
   * How long a message sealed by a codec this process lacks waits before it is offered again (ms):
   * a rolling deploy's process without the codec leaves it for one that has it.
   */
  noCodecRetryMs: 5_000,
} as const;

/** Bounds that keep one call short: no script runs long enough to stall Redis. */
export const LIMITS = {
  /** Messages one reserve call may lease. */
  maxReserveCount: 1_000,
  /** Delayed or expired entries one reserve call may move to ready. */
  maxMovesPerReserve: 1_000,
  /** Items per push script call; pushMany sends the chunks in one round trip. */
  pushChunk: 500,
  /** Ids per ack, extend or dead-letter script call. */
  idsPerCall: 500,
  topicLength: 200,
  idLength: 256,
  /** Nodes one pushFlow may hold, and how deep its tree may go. */
  flowNodes: 10_000,
  flowDepth: 100,
  /** Groups one setGroupWeights call may weigh (one script call per partition). */
  groupWeights: 10_000,
  /** The last epoch ms a Date can hold (ECMAScript's time range): the latest due time or tick. */
  maxDateMs: 8.64e15,
  /** Largest result of one durable step (`context.step`), as JSON bytes. */
  maxStepBytes: 64 * 1024,
  /** Durable steps one message may hold. */
  maxSteps: 100,
  /** Longest name of a durable step (characters). */
  stepNameLength: 256,
  /** Tags one message may hold, and the longest tag (bytes of UTF-8). */
  tagsPerMessage: 10,
  tagBytes: 128,
  /** Longest prefix, queue name (of a module registration) or schedule name (characters). */
  nameLength: 100,
  /** The longest timer Node can set (a longer one fires at once), and so the longest lease or timeout (ms). */
  maxTimerMs: 2 ** 31 - 1,
} as const;

/** Inclusive ranges of the numeric options, checked in one place (queue/validation.ts). */
export const BOUNDS = {
  leaseMs: [10, LIMITS.maxTimerMs],
  maxAttempts: [1, 1_000_000],
  concurrency: [1, 10_000],
  batchSize: [1, LIMITS.maxReserveCount],
  timeoutMs: [1, LIMITS.maxTimerMs],
  commandTimeoutMs: [1, LIMITS.maxTimerMs],
  count: [1, LIMITS.maxReserveCount],
  maxPayloadBytes: [1, 512 * 1024 * 1024],
  partitions: [1, 256],
  replicas: [1, 100],
  replicationTimeoutMs: [1, LIMITS.maxTimerMs],
  deadLetterPage: [1, 10_000],
  priority: [0, 9],
  maxDeferrals: [0, 1_000_000],
  retryLaterMs: [0, LIMITS.maxTimerMs],
  listPage: [1, 10_000],
  listPreview: [1, 65_536],
  completedMaxCount: [1, 10_000_000],
  completedMaxAgeMs: [1, Number.MAX_SAFE_INTEGER],
  globalConcurrency: [1, 100_000],
  rateMax: [1, 1_000_000],
  ratePerMs: [10, 86_400_000],
  groupConcurrency: [1, 1_000],
  groupWeight: [1, 1_000],
  batchMaxSize: [1, LIMITS.maxReserveCount],
  batchMaxWaitMs: [0, 60_000],
  /** About 31,700 years: a schedule's next tick (at most now + everyMs) stays within the Date range. */
  everyMs: [1, 1e15],
} as const satisfies Record<string, readonly [number, number]>;
