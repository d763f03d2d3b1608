import { InvalidOptionError, UnknownHandlerOverrideError } from '../errors';
import type {
  KeepCompletedOptions,
  RedisAckQueueConnection,
  RedisAckQueueOptions,
  QueueHandlerFn,
} from '../interfaces';
import { DEFAULT_PREFIX } from '../common/redis-ack-queue.constants';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';

/**
 * Injection token of the testing override, provided by every `forRoot` / `forRootAsync`
 * registration with the value `null` (no override). A test replaces it in every registration at
 * once with `builder.overrideProvider(REDIS_ACK_QUEUE_TEST_OVERRIDES).useValue(overrides)`, which
 * `overrideQueueForTesting` of `nestjs-redis-ack-queue/testing` does.
 */
export const REDIS_ACK_QUEUE_TEST_OVERRIDES = 'nestjs-redis-ack-queue:test-overrides';

/**
 * A handler that stands in for a `@QueueHandler` method in a test: called as the method would be,
 * `(payload, context)`, or `(messages, context)` for a batch handler.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test's fake takes its topic's payload type, whatever it is
export type RedisAckQueueTestHandler = (payload: any, context: any) => unknown;

/** What the testing override changes in every registration of the app (the value of REDIS_ACK_QUEUE_TEST_OVERRIDES). */
export interface RedisAckQueueTestOverrides {
  /** Replaces every registration's `connection`; unset: each keeps its own. */
  connection?: RedisAckQueueConnection;
  /**
   * Put before every registration's prefix: its keys live under `<prefix>:<its prefix>` (its
   * prefix `ackq` when it has none), so registrations that shared keys still do, and nothing
   * else sees them. Unset: each keeps its own prefix.
   */
  prefix?: string;
  /** Replaces every registration's `keepCompleted` (a topic's own `topics.<name>.keepCompleted` still wins). */
  keepCompleted?: boolean | KeepCompletedOptions;
  /** By topic: the function that runs instead of the `@QueueHandler` method of that topic (any queue). */
  handlers?: Readonly<Record<string, RedisAckQueueTestHandler>>;
  /**
   * Called with each registration's service as soon as it is built, before it connects, so that
   * a test can watch it from its first call (`overrideQueueForTesting` records its pushes).
   */
  onService?: (service: RedisAckQueueService) => void;
}

/** A registration's (or a transport's) options with the testing override applied. */
export function withTestOverrides<O extends RedisAckQueueOptions>(
  options: O,
  overrides: RedisAckQueueTestOverrides | null | undefined,
): O {
  if (!overrides) return options;
  const { connection, prefix, keepCompleted } = overrides;
  return {
    ...options,
    ...(connection !== undefined && { connection }),
    ...(prefix !== undefined && { prefix: `${prefix}:${options.prefix ?? DEFAULT_PREFIX}` }),
    ...(keepCompleted !== undefined && { keepCompleted }),
  };
}

/** The function that replaces the handler of `topic`, if the override names it. */
export function replacementHandler(
  overrides: RedisAckQueueTestOverrides | null | undefined,
  topic: string,
): QueueHandlerFn | undefined {
  const handlers = overrides?.handlers;
  return handlers && Object.hasOwn(handlers, topic) ? handlers[topic] : undefined;
}

/** Every topic the override replaces a handler of is consumed by one of `topics` (the app's handlers). */
export function assertReplacedTopicsServed(
  overrides: RedisAckQueueTestOverrides | null | undefined,
  topics: readonly string[],
): void {
  for (const [topic, handler] of Object.entries(overrides?.handlers ?? {})) {
    if (typeof handler !== 'function') throw new InvalidOptionError(`handlers["${topic}"]`, handler, 'a function');
    if (!topics.includes(topic)) throw new UnknownHandlerOverrideError(topic, [...new Set(topics)]);
  }
}
