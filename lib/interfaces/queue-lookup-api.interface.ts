import type {
  ChildFailure,
  DeadLetterReason,
  FlowRef,
  RedisAckQueueKeyMode,
  RedisAckQueueOnExpire,
  SealedValueInfo,
} from './message.interface';

/**
 * Where a message is: `ready` (waiting in line), `delayed` (waiting for its due time, or for
 * its retry), `leased` (a consumer works on it), `dead` (a dead letter), `completed` (acked on
 * a topic with `keepCompleted`, kept for look-up). The state is the structure that holds the
 * message now: a delayed message already due, or a lease already expired, moves to ready at
 * the next reserve.
 */
export type MessageState = 'ready' | 'delayed' | 'leased' | 'dead' | 'completed' | 'waiting-children';

/** One message as `get` and `list` show it; all times are epoch ms on the Redis server's clock. */
export interface MessageInfo<T = unknown> {
  /** The message's id. */
  id: string;
  /** Where it is now. */
  state: MessageState;
  /**
   * The payload; undefined for an unreadable body, and for a completed message whose record an
   * earlier release wrote (records keep the payload since bulk actions came: `replay`).
   */
  payload: T | undefined;
  /** String metadata given at push (`{}` when none, and for a completed message of an earlier release). */
  headers: Record<string, string>;
  /**
   * Deliveries so far: of a leased message, the number of the running delivery; of a ready
   * or delayed one, the deliveries that ended without an ack (0 before the first); of a dead
   * or completed one, its last delivery.
   */
  attempt: number;
  /**
   * Deliveries allowed. Of a dead letter: those that applied to its deliveries, recorded when it
   * died (the message's own `maxAttempts`, else its consumer's or handler's, else the module's).
   * Of any other message, and of a dead letter buried by 0.1.0 (which did not record it): the
   * message's own `maxAttempts`, else that of the asking service's running consumer of the topic
   * (a `@QueueHandler`'s option), else the service's.
   */
  maxAttempts: number;
  /** When it was pushed; undefined when its stored body is missing or unreadable. */
  enqueuedAt: number | undefined;
  /** Of a delayed message: when it becomes due. */
  dueAt?: number;
  /** Of a leased message: when its lease runs out unless extended. */
  leaseDeadline?: number;
  /** The priority it was pushed with, when it has one. */
  priority?: number;
  /** The ordered group it was pushed with, when it has one. */
  group?: string;
  /**
   * Of a message pushed with a key mode (`debounce`, `throttle` or `supersede`), until it ends:
   * its key and mode (a dead letter has left its key).
   */
  key?: string;
  /** See `key`. */
  mode?: RedisAckQueueKeyMode;
  /**
   * Of a leased message whose handler reported progress (`context.progress`): the latest value
   * stored. Of a topic with a codec it is stored sealed and opened here; absent when this process
   * cannot open it (see docs/codecs.md).
   */
  progress?: unknown;
  /**
   * The durable steps its handlers completed so far (`context.step`): step name -> result (a
   * step that returned nothing: undefined), by name, in an object without a prototype (a step named
   * `__proto__` is a key like any other). Absent when it has none. Kept while the message lives
   * (dead letters included) and with its completed record. Of a topic with a codec each result is
   * stored sealed and opened here; undefined when this process cannot open it (see docs/codecs.md).
   */
  steps?: Record<string, unknown>;
  /** Of a completed message: what the handler returned (or `ack` was given), when it was kept. */
  result?: unknown;
  /** Of a completed message: when it was acked. */
  completedAt?: number;
  /** Of a completed message acked by a consumer: how long its handler ran (ms). */
  durationMs?: number;
  /** Of a dead letter: when it died. */
  deadAt?: number;
  /** Of a dead letter: why it died (see {@link DeadLetterReason}). */
  reason?: DeadLetterReason | 'unknown';
  /** Of a dead letter: the error text of its last failure. */
  error?: string | null;
  /**
   * Of a row that `list` read with `preview`: its payload (of a completed message: its result)
   * cut in Redis; `payload` and `result` are then undefined (`get` gives them whole).
   */
  preview?: MessagePreview;
  /** The tags it was pushed with, when it has any (kept while it lives, dead or completed included). */
  tags?: string[];
  /** Of a message not started yet that has a start-by deadline: the deadline (see `startBy`). */
  startBy?: number;
  /** Of a message with a start-by deadline: what it becomes when the deadline passes. */
  onExpire?: RedisAckQueueOnExpire;
  /** Of a flow's child (`pushFlow`): its parent, while the child lives. */
  parent?: FlowRef;
  /** Of a flow's parent: each child and how it stands, until the parent ends. */
  children?: FlowChildInfo[];
  /**
   * Present when a codec sealed its payload and headers (see docs/codecs.md): their size and key
   * id, whether or not this process could open them into `payload` and `headers` (see
   * {@link SealedValueInfo}). On a row listed with `preview`, in place of the preview (a cut of a
   * sealed value cannot be opened: its headers, sealed with it, are then `{}`; `get` opens it whole).
   */
  sealed?: SealedValueInfo;
  /** Of a completed message whose result a codec sealed: as `sealed`, for `result`. */
  sealedResult?: SealedValueInfo;
  /** When a codec sealed its progress value: as `sealed`, for `progress`. */
  sealedProgress?: SealedValueInfo;
  /** The steps whose results a codec sealed, by step name: as `sealed`, for each of `steps`. */
  sealedSteps?: Record<string, SealedValueInfo>;
}

/** A child of a flow's parent as `get` shows it. */
export interface FlowChildInfo extends FlowRef {
  /** `pending` until it ends; `acked` (with its result) or `failed` (with why) after. */
  outcome: 'pending' | 'acked' | 'failed';
  /** What its handler returned, once acked. */
  result?: unknown;
  /** Why it failed: its dead-letter reason (or `cancelled`) and the error's text. */
  failure?: ChildFailure;
  /** Present when a codec sealed its result: size and key id, opened into `result` when this process can. */
  sealedResult?: SealedValueInfo;
}

/** A payload (or result) as a row of `list(topic, state, { preview })` shows it. */
export interface MessagePreview {
  /** Its JSON text, at most `preview` bytes of it, never cut inside a character. */
  text: string;
  /** Whether `text` was cut. */
  truncated: boolean;
  /** The size of its whole JSON text (bytes). */
  bytes: number;
}

/**
 * Which messages of a state `list`, `count` and `bulk` select; every field given must match.
 * See docs/tags.md.
 */
export interface MessageFilter {
  /** Messages pushed with this tag (compared whole, case-sensitive). */
  tag?: string;
  /** Pushed at or after this moment (a Date or epoch ms, Redis server clock). */
  from?: Date | number;
  /** Pushed at or before this moment (a Date or epoch ms, Redis server clock). */
  to?: Date | number;
  /**
   * Whose error text contains this (1-1,024 characters, case-sensitive, as given, no patterns):
   * the last failure's text of a dead letter. Messages of other states have none: none matches.
   */
  errorContains?: string;
}

/** Options of `list`. */
export interface ListOptions extends MessageFilter {
  /**
   * How many to skip (a whole number >= 0).
   * @defaultValue `0`
   */
  offset?: number;
  /**
   * Most to return (1-10,000).
   * @defaultValue `100`
   */
  limit?: number;
  /**
   * Give each row a preview of its payload (of a completed message: of its result) instead of
   * the whole value: its JSON text cut to this many bytes in Redis (1-65,536), in `preview`,
   * with `payload` and `result` left undefined (a completed row's `headers` too: they are kept
   * with its payload). A page of large messages then costs about `limit * preview` bytes from
   * Redis, not `limit` whole bodies; `get` gives one whole.
   * @defaultValue undefined: whole payloads and results, as before
   */
  preview?: number;
}

/**
 * Keeping acked messages for look-up: their id stays taken (a push with it is a duplicate)
 * and `get` shows them as `completed` with the handler's result. The oldest beyond
 * `maxCount`, or older than `maxAgeMs`, are deleted for good, as dead letters are.
 */
export interface KeepCompletedOptions {
  /**
   * Most completed messages kept per topic (per partition of a partitioned topic; 1 to 10,000,000).
   * @defaultValue `1_000`
   */
  maxCount?: number;
  /**
   * Oldest completed message kept (ms, a whole number >= 1).
   * @defaultValue `86_400_000` (24 h)
   */
  maxAgeMs?: number;
}

/**
 * Looking messages up, listing them by state, and cancelling them: the job-control part of
 * `RedisAckQueueService`.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a `RedisAckQueueError` with a stable `code`.
 */
export interface RedisAckQueueLookupApi {
  /**
   * One message by id, read in one atomic script call (of a partitioned topic: in the
   * partition its id belongs to); null when no message of the topic has this id (never
   * pushed, acked without `keepCompleted`, cancelled, or deleted by a bound).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidMessageIdError} when `id` is not 1-256 characters.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * const message = await queue.get('order.payment-timeout', 'order-42');
   * if (message?.state === 'delayed') console.log('due at', new Date(message.dueAt!));
   * ```
   */
  get<T = unknown>(topic: string, id: string): Promise<MessageInfo<T> | null>;

  /**
   * A page of the messages of one state, in the order they will be served: `ready` head first,
   * `delayed` by due time, `leased` by lease deadline, `completed` newest first, `dead` oldest
   * first (the page of `deadLetters`, shown as MessageInfo). With a filter (`tag`, `from`, `to`,
   * `errorContains`: see MessageFilter and docs/tags.md), only the messages that match, in the same
   * order, or with a `tag` by push time (oldest first). Of a partitioned topic, the
   * partitions are merged in that order (ready ones by push time, since partitions take turns;
   * each partition keeps its own order): their sizes are read first (a page past the end reads
   * nothing more), then the sort keys of each one's first `offset + limit`, never a body, then
   * only the rows of the page.
   * @param state - `'ready' | 'delayed' | 'leased' | 'completed' | 'dead' | 'waiting-children'`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `state` is not one of those, or `offset`, `limit`, `preview`
   *   or a filter's field is out of range (its message never quotes a tag or a searched text).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * const failed = await queue.list('emails', 'dead', { tag: 'tenant:42', errorContains: 'timeout' });
   * ```
   */
  list<T = unknown>(topic: string, state: MessageState, options?: ListOptions | null): Promise<MessageInfo<T>[]>;

  /**
   * How many messages of one state match a filter (all of the state without one), over every
   * partition. Counted a bounded batch per Redis call, so a large state never holds Redis for
   * long; a message that moves while it counts may be counted in either state (or neither).
   * Equal to the length of `list` with the same filter and a limit that takes them all.
   * @param state - `'ready' | 'delayed' | 'leased' | 'completed' | 'dead' | 'waiting-children'`.
   * @param filter - `tag`, `from`, `to`, `errorContains` (see MessageFilter); left out or null: none.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `state` is not one of those, `filter` is not an object, or
   *   one of its fields is out of range (its message never quotes a tag or a searched text).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * const stuck = await queue.count('emails', 'dead', { tag: 'tenant:42', from: Date.now() - 3_600_000 });
   * ```
   */
  count(topic: string, state: MessageState, filter?: MessageFilter | null): Promise<number>;

  /**
   * Removes a message for good, whatever its state, with everything stored about it; emits
   * `cancelled`. A leased message's lease ends at once: its late ack returns false and its
   * nack `'lost'`, it is never delivered again, and the handler running it (in any process)
   * sees `context.signal` abort with MessageCancelledError within about 100 ms; its outcome
   * is then ignored (neither acked, retried nor dead-lettered).
   * @returns The state it was in, or null when the topic had no message with this id.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidMessageIdError} when `id` is not 1-256 characters.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * // The order was paid: its payment timeout must not fire.
   * await queue.cancel('order.payment-timeout', 'order-42');
   * ```
   */
  cancel(topic: string, id: string): Promise<MessageState | null>;
}
