import { BOUNDS, DEFAULTS, DEFAULT_PREFIX } from '../common/redis-ack-queue.constants';
import type { CompletedPolicy, ReserveRequest } from '../engine/consumer-engine';
import type {
  BatchOptions,
  QueueHandlerDefaults,
  RedisAckQueueLogLevel,
  RedisAckQueueOptions,
  ReserveOptions,
  TopicLimits,
} from '../interfaces';
import { LOG_LEVEL_RANKS } from '../observability/queue-logger';
import { assertBackoff, resolveBackoff } from './backoff';
import { resolveKeepCompleted } from './completed-settings';
import { assertTopicLimits, pickLimits } from './limit-settings';
import { InvalidOptionError } from '../errors';
import {
  assertBounded,
  assertDuration,
  assertOptionalBounded,
  assertOptionalInteger,
  assertPrefix,
  assertTopic,
  isPlainObject,
} from './validation';

/** Consumer settings with every default filled in. */
export interface ConsumerSettings {
  leaseMs: number;
  maxAttempts: number;
  backoff: (attempt: number, error: unknown) => number;
  concurrency: number;
  batchSize: number;
  timeoutMs: number | undefined;
  /** How long a consumer's close waits for running handlers, unless told otherwise. */
  drainMs: number;
  /** Deferrals (retryLater) of one message that do not count as attempts. */
  maxDeferrals: number;
}

export interface ServiceSettings extends ConsumerSettings {
  prefix: string;
  maxPayloadBytes: number;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  deadMaxCount: number;
  deadMaxAgeMs: number;
  allowEviction: boolean;
  /** Whether this process records the topics' history (`history`). */
  history: boolean;
  /** How many entries the fleet event stream keeps, when this process writes to it (`fleetEvents`). */
  fleetEvents: { maxLen: number } | undefined;
  /** Partition count of every topic that has more than one. */
  partitions: ReadonlyMap<string, number>;
  replicatedPushes: { replicas: number; timeoutMs: number } | undefined;
  logLevel: RedisAckQueueLogLevel;
  /** How each topic keeps completed messages (`keepCompleted`); undefined where it keeps none. */
  keepCompleted(topic: string): CompletedPolicy | undefined;
  /** The limits `topics.<name>` sets, if any. */
  limits(topic: string): TopicLimits | undefined;
}

/** Checks the options a handler or consume() call may set; throws a typed error on the first bad one. */
export function assertHandlerOptions(options: QueueHandlerDefaults): void {
  assertOptionalBounded('leaseMs', options.leaseMs);
  assertOptionalBounded('maxAttempts', options.maxAttempts);
  assertOptionalBounded('concurrency', options.concurrency);
  assertOptionalBounded('batchSize', options.batchSize);
  assertOptionalBounded('timeoutMs', options.timeoutMs);
  assertOptionalBounded('maxDeferrals', options.maxDeferrals);
  if (options.backoff !== undefined) assertBackoff(options.backoff);
  assertTopicLimits(options);
}

export function resolveServiceSettings(options: RedisAckQueueOptions): ServiceSettings {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  assertHandlerOptions(options);
  assertOptionalBounded('maxPayloadBytes', options.maxPayloadBytes);
  if (options.drainMs !== undefined) assertDuration('drainMs', options.drainMs);
  assertOptionalInteger('connectTimeoutMs', options.connectTimeoutMs, 1);
  assertOptionalBounded('commandTimeoutMs', options.commandTimeoutMs);
  const dead = options.deadLetters ?? {};
  assertOptionalInteger('deadLetters.maxCount', dead.maxCount, 0);
  assertOptionalInteger('deadLetters.maxAgeMs', dead.maxAgeMs, 0);
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes;
  return {
    ...resolveConsumerSettings(options, undefined),
    drainMs: options.drainMs ?? DEFAULTS.drainMs,
    prefix,
    maxPayloadBytes,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULTS.commandTimeoutMs,
    deadMaxCount: dead.maxCount ?? DEFAULTS.deadLetters.maxCount,
    deadMaxAgeMs: dead.maxAgeMs ?? DEFAULTS.deadLetters.maxAgeMs,
    allowEviction: options.allowEviction ?? false,
    history: resolveFlag('history', options.history, true),
    fleetEvents: resolveFleetEvents(options.fleetEvents),
    partitions: resolvePartitions(options.topics),
    replicatedPushes: resolveReplicatedPushes(options.replicatedPushes),
    logLevel: resolveLogLevel(options.logLevel),
    keepCompleted: resolveKeepCompleted(options, maxPayloadBytes),
    limits: (topic) => pickLimits(options.topics?.[topic]),
  };
}

function resolveFleetEvents(value: unknown): { maxLen: number } | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { maxLen: DEFAULTS.fleetEventsMaxLen };
  if (!isPlainObject(value)) throw new InvalidOptionError('fleetEvents', value, 'true, false or { maxLen }');
  assertOptionalInteger('fleetEvents.maxLen', value.maxLen, 1);
  return { maxLen: (value.maxLen as number | undefined) ?? DEFAULTS.fleetEventsMaxLen };
}

function resolveFlag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidOptionError(name, value, 'true or false');
  return value;
}

function resolveLogLevel(level: unknown): RedisAckQueueLogLevel {
  if (level === undefined) return DEFAULTS.logLevel;
  if (typeof level !== 'string' || !Object.hasOwn(LOG_LEVEL_RANKS, level)) {
    throw new InvalidOptionError(
      'logLevel',
      level,
      `one of ${Object.keys(LOG_LEVEL_RANKS)
        .map((l) => `'${l}'`)
        .join(', ')}`,
    );
  }
  return level as RedisAckQueueLogLevel;
}

function resolvePartitions(topics: RedisAckQueueOptions['topics']): Map<string, number> {
  const partitions = new Map<string, number>();
  if (topics === undefined) return partitions;
  if (typeof topics !== 'object' || topics === null || Array.isArray(topics)) {
    throw new InvalidOptionError('topics', topics, 'an object of { partitions, keepCompleted } by topic name');
  }
  for (const [topic, layout] of Object.entries(topics)) {
    assertTopic(topic);
    assertOptionalBounded('partitions', layout?.partitions, `topics.${topic}.partitions`);
    if (layout) assertTopicLimits(layout, `topics.${topic}.`);
    if ((layout?.partitions ?? 1) > 1) partitions.set(topic, layout.partitions!);
  }
  return partitions;
}

function resolveReplicatedPushes(
  option: RedisAckQueueOptions['replicatedPushes'],
): ServiceSettings['replicatedPushes'] {
  if (option === undefined) return undefined;
  if (typeof option !== 'object' || option === null) {
    throw new InvalidOptionError('replicatedPushes', option, 'an object { replicas, timeoutMs? }');
  }
  assertBounded('replicas', option.replicas, 'replicatedPushes.replicas');
  assertOptionalBounded('replicationTimeoutMs', option.timeoutMs, 'replicatedPushes.timeoutMs');
  return { replicas: option.replicas, timeoutMs: option.timeoutMs ?? 1_000 };
}

/**
 * Handler options over the service's (or the library's) defaults. A batch handler's messages
 * each hold a slot while their batch runs: `concurrency` batch calls take concurrency x maxSize
 * slots, and one reserve can bring a whole batch.
 */
export function resolveConsumerSettings(
  options: QueueHandlerDefaults & { batch?: BatchOptions },
  fallback: ConsumerSettings | undefined,
): ConsumerSettings {
  assertHandlerOptions(options);
  const settings = resolveSingleSettings(options, fallback);
  if (options.batch === undefined) return settings;
  const { maxSize } = assertBatch(options.batch);
  return {
    ...settings,
    concurrency: settings.concurrency * maxSize,
    batchSize: Math.min(Math.max(settings.batchSize, maxSize), BOUNDS.batchSize[1]),
  };
}

function assertBatch(batch: unknown): BatchOptions {
  if (typeof batch !== 'object' || batch === null) {
    throw new InvalidOptionError('batch', batch, 'an object { maxSize, maxWaitMs }');
  }
  const { maxSize, maxWaitMs } = batch as BatchOptions;
  assertBounded('batchMaxSize', maxSize, 'batch.maxSize');
  assertBounded('batchMaxWaitMs', maxWaitMs, 'batch.maxWaitMs');
  return { maxSize, maxWaitMs };
}

function resolveSingleSettings(
  options: QueueHandlerDefaults,
  fallback: ConsumerSettings | undefined,
): ConsumerSettings {
  return {
    leaseMs: options.leaseMs ?? fallback?.leaseMs ?? DEFAULTS.leaseMs,
    maxAttempts: options.maxAttempts ?? fallback?.maxAttempts ?? DEFAULTS.maxAttempts,
    backoff: options.backoff
      ? resolveBackoff(options.backoff)
      : (fallback?.backoff ?? resolveBackoff(DEFAULTS.backoff)),
    concurrency: options.concurrency ?? fallback?.concurrency ?? DEFAULTS.concurrency,
    batchSize: options.batchSize ?? fallback?.batchSize ?? DEFAULTS.batchSize,
    timeoutMs: options.timeoutMs ?? fallback?.timeoutMs,
    drainMs: fallback?.drainMs ?? DEFAULTS.drainMs,
    maxDeferrals: options.maxDeferrals ?? fallback?.maxDeferrals ?? DEFAULTS.maxDeferrals,
  };
}

/** reserve()'s options over the service's defaults, checked. */
export function resolveReserveRequest(
  options: ReserveOptions | null | undefined,
  defaults: ConsumerSettings,
): ReserveRequest {
  const { count = 1, leaseMs = defaults.leaseMs, maxAttempts = defaults.maxAttempts } = options ?? {};
  assertBounded('count', count);
  assertBounded('leaseMs', leaseMs);
  assertBounded('maxAttempts', maxAttempts);
  return { count, leaseMs, maxAttempts };
}
