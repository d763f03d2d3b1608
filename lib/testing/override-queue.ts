import { randomBytes } from 'node:crypto';
import type { KeepCompletedOptions, RedisAckQueueConnection } from '../interfaces';
import {
  REDIS_ACK_QUEUE_TEST_OVERRIDES,
  type RedisAckQueueTestHandler,
  type RedisAckQueueTestOverrides,
} from '../nest/queue-test-overrides';
import { recordPushes } from './pushed-messages';

/** Options of {@link overrideQueueForTesting}. */
export interface QueueTestingOptions {
  /**
   * Replaces every registration's `connection` (a test Redis: `redis.url`).
   * @defaultValue each registration keeps its own
   */
  connection?: RedisAckQueueConnection;
  /**
   * Put before every registration's prefix: its keys live under `<prefix>:<its prefix>` (`ackq`
   * when it has none), so registrations that shared keys still do. Give one to read the keys
   * from elsewhere (another process, the CLI).
   * @defaultValue a fresh `test-<random>` per call: test files sharing one Redis never see each
   *   other's messages, and a file needs no flush between runs
   */
  prefix?: string;
  /**
   * Replaces every registration's `keepCompleted`, so a test can read what was acked
   * (`messagesOf`; a completed message keeps its id, attempt, result and payload).
   * @defaultValue `true`
   */
  keepCompleted?: boolean | KeepCompletedOptions;
  /**
   * By topic: a function run instead of that topic's `@QueueHandler` method, as
   * `fn(payload, context)` (`fn(messages, context)` for a batch handler); the other handlers of
   * its class run for real. Its outcome acks or fails the message as the method's would.
   * A topic no `@QueueHandler` consumes fails startup with UnknownHandlerOverrideError.
   */
  handlers?: Readonly<Record<string, RedisAckQueueTestHandler>>;
}

/**
 * The part of Nest's `TestingModuleBuilder` (of `@nestjs/testing`, 11 or 12) that
 * {@link overrideQueueForTesting} uses: `overrideProvider(token).useValue(value)`.
 * @typeParam B - The builder type, returned as it is.
 */
export interface QueueTestingModuleBuilder<B> {
  /** Nest's `overrideProvider`. */
  overrideProvider(token: string): {
    /** Nest's `useValue`: returns the builder. */
    useValue(value: RedisAckQueueTestOverrides): B;
  };
}

/**
 * Points every `RedisAckQueueModule` registration of the app under test (`forRoot`,
 * `forRootAsync`, named queues) at a test Redis, with a key prefix of its own, completed messages
 * kept, chosen handlers replaced, and every push recorded (read with `pushedTo`): without any import
 * order, as a provider override on the testing module. The app's transport (a `RedisAckQueueServer`
 * it connects, `RedisAckQueueClient`s of `ClientsModule`) follows the default queue's registration
 * the same way. Call it before `compile()`.
 * @param builder - `Test.createTestingModule({ imports: [AppModule] })`.
 * @param options - The connection, prefix, keepCompleted and handlers to use.
 * @returns The builder, for chaining.
 * @example
 * ```ts
 * const moduleRef = await overrideQueueForTesting(Test.createTestingModule({ imports: [AppModule] }), {
 *   connection: redis.url,
 *   handlers: { 'orders.created': (payload: Order) => void seen.push(payload) },
 * }).compile();
 * ```
 */
export function overrideQueueForTesting<B>(
  builder: QueueTestingModuleBuilder<B>,
  options: QueueTestingOptions = {},
): B {
  const { connection, prefix = freshPrefix(), keepCompleted = true, handlers } = options;
  const overrides: RedisAckQueueTestOverrides = {
    connection,
    prefix,
    keepCompleted,
    handlers,
    onService: recordPushes,
  };
  return builder.overrideProvider(REDIS_ACK_QUEUE_TEST_OVERRIDES).useValue(overrides);
}

/** `test-` and 12 random hex digits: unique across processes and test files. */
function freshPrefix(): string {
  return `test-${randomBytes(6).toString('hex')}`;
}
