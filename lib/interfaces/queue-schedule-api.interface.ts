import type { PushResult, RedisAckQueueOnExpire } from './message.interface';

/**
 * When a schedule ticks and what each tick pushes. Exactly one of `cron` and `everyMs`.
 * Every tick pushes one message with the id `schedule:<name>:<tickEpochMs>`.
 */
export interface ScheduleOptions {
  /**
   * A cron expression (5 fields, or 6 with seconds first), parsed by croner:
   * `'0 2 * * *'` is 02:00 every day. Read in `tz`.
   */
  cron?: string;
  /**
   * Ticks every this many ms (a whole number from 1 to 1e15, about 31,700 years, so the next tick
   * stays within the Date range), at whole multiples of it since the epoch (or since `startAt`
   * when given): `60_000` ticks at every whole minute.
   */
  everyMs?: number;
  /**
   * IANA time zone of `cron` (`'Europe/Berlin'`); daylight saving time follows croner.
   * @defaultValue `'UTC'`
   */
  tz?: string;
  /**
   * The payload of every tick's message: any JSON value.
   * @defaultValue `null`
   */
  payload?: unknown;
  /** Headers of every tick's message (string values). */
  headers?: Record<string, string>;
  /** No tick before this time (a Date or epoch ms up to 8.64e15, the Date range). */
  startAt?: Date | number;
  /** No tick after this time (a Date or epoch ms up to 8.64e15); not before `startAt`. */
  endAt?: Date | number;
  /**
   * A start-by deadline for every tick's message, relative to its tick (ms, a whole number >= 1):
   * a tick not started within it (a backlog behind an outage) is never started. One period is a
   * common choice. See docs/deadlines.md.
   */
  expiresInMs?: number;
  /**
   * What a tick's message whose deadline passed becomes (only with `expiresInMs`).
   * @defaultValue `'dead-letter'`
   */
  onExpire?: RedisAckQueueOnExpire;
}

/** One schedule of the module option `schedules`: its topic, its name and its options. */
export interface ScheduleDefinition extends ScheduleOptions {
  /** The topic each tick pushes to. */
  topic: string;
  /** The schedule's name, unique per topic: 1-100 characters of `A-Z a-z 0-9 . _ - :`. */
  name: string;
}

/** A schedule as `schedules()` reports it; times are epoch ms of the Redis server's clock. */
export interface ScheduleInfo {
  /** The topic each tick pushes to. */
  topic: string;
  /** The schedule's name. */
  name: string;
  /** Its cron expression, when it has one. */
  cron?: string;
  /** Its interval (ms), when it has one. */
  everyMs?: number;
  /** The time zone of its cron expression, when one was given (else UTC). */
  tz?: string;
  /** The next tick, or `null` when none is left (past `endAt`). */
  nextRunAt: number | null;
  /** The last tick that pushed a message; absent before the first. */
  lastRunAt?: number;
  /** Each tick's start-by deadline after its tick (ms), when it has one. */
  expiresInMs?: number;
  /** What a tick's message whose deadline passed becomes, when it has a deadline. */
  onExpire?: RedisAckQueueOnExpire;
  /**
   * Present when code declared it (the module's `schedules`, `declareSchedules`): a later startup
   * whose `schedules` no longer lists it removes it. Absent when upserted by hand.
   */
  declared?: true;
}

/**
 * Repeating and cron schedules of `RedisAckQueueService`. Each tick pushes exactly one
 * message, however many services run the scheduler and however many die meanwhile; ticks are
 * timed by the Redis server's clock. After every scheduler was down, only the most recent
 * missed tick runs.
 */
export interface RedisAckQueueScheduleApi {
  /**
   * Creates or changes a schedule and starts this service's scheduler. A change takes effect
   * from the next tick (the pending tick of the old definition is replaced); the same
   * definition again changes nothing (the pending tick stays). Every argument is checked first:
   * a bad one throws and changes nothing.
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @param name - 1-100 characters of `A-Z a-z 0-9 . _ - :`, unique per topic.
   * @returns The schedule as stored, with its next tick.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not a valid topic name.
   * @throws {InvalidScheduleError} for a bad name, an invalid cron expression or time zone,
   *   both or neither of `cron` and `everyMs`, or `endAt` before `startAt`.
   * @throws {InvalidOptionError} when `everyMs`, `startAt`, `endAt` or `headers` has a bad value.
   * @throws {InvalidPayloadError | PayloadTooLargeError} as for `push`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * await queue.upsertSchedule('report.nightly', 'nightly', { cron: '0 2 * * *', tz: 'Europe/Berlin' });
   * await queue.upsertSchedule('cache.refresh', 'refresh', { everyMs: 60_000, payload: { full: false } });
   * ```
   */
  upsertSchedule(topic: string, name: string, options: ScheduleOptions): Promise<ScheduleInfo>;

  /**
   * Upserts each schedule in order, as `upsertSchedule` does, and keeps them: when Redis comes
   * back without this prefix's data (a restart without persistence, a failover to a replica that
   * did not have it), a connected service upserts them again, with the limits its consumers
   * wrote and its topics in the registry, and logs one warning. The module's `schedules` option
   * calls this at startup. Messages lost with the data are not restored. Then removes the
   * schedules declared this way before (by any process) that this service does not declare;
   * schedules upserted by hand stay.
   * @param schedules - Each `{ topic, name, ...options }`.
   * @returns Each schedule as stored, in order.
   * @throws {InvalidOptionError} when `schedules` is not an array of objects.
   * @throws The errors of `upsertSchedule`, for the first schedule that fails (those before it are upserted).
   * @example
   * ```ts
   * await queue.declareSchedules([{ topic: 'report.nightly', name: 'nightly', cron: '0 2 * * *' }]);
   * ```
   */
  declareSchedules(schedules: ScheduleDefinition[]): Promise<ScheduleInfo[]>;

  /**
   * Deletes a schedule and its pending tick; resolves `false` when there was none.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not a valid topic name.
   * @throws {InvalidScheduleError} when `name` is not a valid schedule name.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} as for `upsertSchedule`.
   */
  removeSchedule(topic: string, name: string): Promise<boolean>;

  /**
   * The schedules of `topic`, or of every topic (read from an index of topics, never by SCAN),
   * sorted by topic and name.
   * @throws {InvalidTopicError} when `topic` is given and not a valid topic name.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} as for `upsertSchedule`.
   */
  schedules(topic?: string): Promise<ScheduleInfo[]>;

  /**
   * Pushes a schedule's message now, out of turn (an operator's "run now"), with the id
   * `schedule:<name>@<serverEpochMs>`; the schedule's next tick still runs when due. Emits
   * `pushed`. Two calls in the same millisecond push one message (the second is a duplicate).
   * @returns The pushed message's id, or null when the topic has no schedule of this name.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not a valid topic name.
   * @throws {InvalidScheduleError} when `name` is not a valid schedule name.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} as for `upsertSchedule`.
   * @example
   * ```ts
   * await queue.runScheduleNow('report.nightly', 'nightly');
   * ```
   */
  runScheduleNow(topic: string, name: string): Promise<PushResult | null>;
}
