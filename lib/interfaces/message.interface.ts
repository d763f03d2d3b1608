/** The options of `push` besides its key mode (see PushOptions). */
export interface PushOptionsBase {
  /**
   * Your id for the message (1-256 characters); a second push with an id that still exists
   * is a duplicate.
   * @defaultValue a new id, unique without coordination
   */
  id?: string;
  /**
   * Deliver no earlier than this many ms from now (server clock); with `availableAt` too,
   * the later of the two wins. It must end within the Date range (8.64e15 epoch ms).
   * @defaultValue `0`
   */
  delayMs?: number;
  /** Deliver no earlier than this moment (a Date or epoch ms, at most 8.64e15: the Date range). */
  availableAt?: Date | number;
  /** Deliveries allowed for this message (1-1,000,000), overriding the consumer's setting. */
  maxAttempts?: number;
  /**
   * String metadata carried with the message (trace ids, origin...): a plain object of
   * string values.
   * @defaultValue `{}`
   */
  headers?: Record<string, string>;
  /**
   * Priority level, a whole number from 0 to 9: a consumer takes the highest level first,
   * first in first out within a level. Retries, released and expired leases and requeued
   * dead letters keep their level.
   * @defaultValue `0`
   */
  priority?: number;
  /**
   * Ordered group (1-256 characters, no NUL): the messages of one group are handled one at a
   * time in push order (up to the topic's `groupConcurrency` at once), the next starting only
   * once the previous is acked, dead or cancelled; a failed one keeps its place through its
   * backoff. Groups take turns, so a deep group never starves the others, and ungrouped
   * messages of the topic keep flowing. On a partitioned topic a group lives in one partition
   * (chosen by the group, so deduplication by id holds among the messages of one group).
   * Not with `priority`.
   */
  group?: string;
  /**
   * Start-by deadline, absolute (a Date or epoch ms, at most 8.64e15): a message not started by
   * then is never started; it ends as `onExpire` says. Judged by the Redis server's clock, never
   * the caller's. It must lie after the moment the message becomes due (a deadline already past,
   * by the server's clock, is refused). Not with `expiresInMs`. See docs/deadlines.md.
   */
  startBy?: Date | number;
  /**
   * Start-by deadline relative to when the message becomes due (ms, a whole number >= 1): its
   * push, or its due time when delayed. A message not started within it is never started; it
   * ends as `onExpire` says. Retries keep the first deadline. Not with `startBy`.
   */
  expiresInMs?: number;
  /**
   * What happens to a message whose start-by deadline passed: `'dead-letter'` (a dead letter
   * with reason `expired`) or `'drop'` (deleted, as a cancel does). Only with `startBy` or
   * `expiresInMs`.
   * @defaultValue `'dead-letter'`
   */
  onExpire?: RedisAckQueueOnExpire;
  /**
   * Up to 10 tags (each 1-128 bytes of UTF-8, no control characters; repeats are kept once),
   * stored in the topic's own slot: `list`, `count` and `bulk` select by them, `get` shows them.
   * A message keeps its tags while it lives, dead or completed included. See docs/tags.md.
   */
  tags?: readonly string[];
}

/** What a message whose start-by deadline passed becomes: a dead letter (`expired`) or nothing. */
export type RedisAckQueueOnExpire = 'dead-letter' | 'drop';

/** No key mode: a push so typed answers a PushResult. */
export interface NoKeyMode {
  /** Absent: see PushOptions. */
  debounce?: undefined;
  /** Absent: see PushOptions. */
  throttle?: undefined;
  /** Absent: see PushOptions. */
  supersede?: undefined;
}

/** Options of a push without a key mode: its answer is a PushResult. */
export interface PlainPushOptions extends PushOptionsBase, NoKeyMode {}

/** Options of a debounced push: no `id`, `delayMs`, `availableAt`, `group` or other key mode (they do not compile). */
export interface DebouncePushOptions extends Omit<PushOptionsBase, 'id' | 'delayMs' | 'availableAt' | 'group'> {
  /**
   * Trailing debounce by key: while the key's message has not started, a push with the same
   * key gives it its payload, headers and priority and makes it due `delayMs` from now (no later
   * than `maxWaitMs` after the push that stored it); the answer is `{ id, debounced: true }`
   * with the pending message's id. Once it started, the next push stores a new message.
   * Not with `id`, `delayMs`, `availableAt`, `group` or another key mode.
   */
  debounce: RedisAckQueueDebounce;
  /** Absent with this key mode (it does not compile). */
  throttle?: undefined;
  /** Absent with this key mode (it does not compile). */
  supersede?: undefined;
  /** Absent with this key mode (it does not compile). */
  id?: undefined;
  /** Absent with this key mode (it does not compile). */
  delayMs?: undefined;
  /** Absent with this key mode (it does not compile). */
  availableAt?: undefined;
  /** Absent with this key mode (it does not compile). */
  group?: undefined;
}

/** Options of a throttled push: no `id`, `group` or other key mode (they do not compile). */
export interface ThrottlePushOptions extends Omit<PushOptionsBase, 'id' | 'group'> {
  /**
   * One message per key and window: the first push of a key stores its message and opens a
   * window of `windowMs` (server clock); pushes of the key inside it change nothing and answer
   * `{ id, duplicate: true }` with the id of the message that holds the window.
   * Not with `id`, `group` or another key mode.
   */
  throttle: RedisAckQueueThrottle;
  /** Absent with this key mode (it does not compile). */
  debounce?: undefined;
  /** Absent with this key mode (it does not compile). */
  supersede?: undefined;
  /** Absent with this key mode (it does not compile). */
  id?: undefined;
  /** Absent with this key mode (it does not compile). */
  group?: undefined;
}

/** Options of a superseding push: no `id`, `group` or other key mode (they do not compile). */
export interface SupersedePushOptions extends Omit<PushOptionsBase, 'id' | 'group'> {
  /**
   * Only the latest push of a key matters: it replaces the payload of the key's message that
   * has not started (answer `{ id, superseded: true }`, its id), else stores a new one. With
   * `running: 'cancel'` the key's running message is cancelled as `cancel` does (its handler's
   * signal aborts, its late ack is refused); the new one starts once that handler returned (at
   * the latest when its lease runs out). With `running: 'keep'` the running one finishes and the
   * new one waits for it: at most one running and one waiting per key.
   * Not with `id`, `group` or another key mode.
   */
  supersede: RedisAckQueueSupersede;
  /** Absent with this key mode (it does not compile). */
  debounce?: undefined;
  /** Absent with this key mode (it does not compile). */
  throttle?: undefined;
  /** Absent with this key mode (it does not compile). */
  id?: undefined;
  /** Absent with this key mode (it does not compile). */
  group?: undefined;
}

/** Options of a push with a key mode: its answer is a KeyedPushResult. */
export type KeyedPushOptions = DebouncePushOptions | ThrottlePushOptions | SupersedePushOptions;

/**
 * Per-message options of `push`: at most one key mode, and with it only the options it takes, so
 * a conflict fails to compile (and is refused at run time with InvalidOptionError, for callers
 * that are not type-checked).
 */
export type PushOptions = PlainPushOptions | KeyedPushOptions;

/** `debounce` of a push. */
export interface RedisAckQueueDebounce {
  /** 1-256 characters (no NUL): the pushes of one topic with this key share one pending message. */
  key: string;
  /** How long after the last push of the key its message becomes due (ms, a whole number >= 0). */
  delayMs: number;
  /** At most this long after the push that stored it (ms, >= 0), however many pushes follow. */
  maxWaitMs?: number;
}

/** `throttle` of a push. */
export interface RedisAckQueueThrottle {
  /** 1-256 characters (no NUL): the pushes of one topic with this key share one window. */
  key: string;
  /** The window a stored message holds for its key (ms, a whole number >= 1). */
  windowMs: number;
}

/** `supersede` of a push. */
export interface RedisAckQueueSupersede {
  /** 1-256 characters (no NUL): the pushes of one topic with this key share one waiting message. */
  key: string;
  /** What a new push does to the key's running message: `'cancel'` it, or `'keep'` it running and wait. */
  running: 'cancel' | 'keep';
}

/** A message's key mode, as look-ups show it. */
export type RedisAckQueueKeyMode = 'debounce' | 'throttle' | 'supersede';

/** The payload of one item of `pushMany`. */
export interface PushPayload<T = unknown> {
  /** Any JSON value (`null` is fine, `undefined` is not), at most `maxPayloadBytes` as JSON. */
  payload: T;
}

/** One item of `pushMany`: its payload and its options. */
export type PushManyItem<T = unknown> = PushOptions & PushPayload<T>;

/** An item of `pushMany` without a key mode. */
export type PlainPushManyItem<T = unknown> = PlainPushOptions & PushPayload<T>;

/** What `push` and `pushMany` answer per message pushed without a key mode. */
export interface PushResult {
  /** The message's id: the one given, or the one made. */
  id: string;
  /**
   * True when a message with this id already existed (or, with `throttle`, the key's window is
   * held: `id` is the holder's); nothing was changed then.
   */
  duplicate: boolean;
}

/** A push with a key mode that stored a new message (`duplicate: false`) or, inside a throttle window, changed nothing. */
export interface KeyedPushStored extends PushResult {
  /** Absent: nothing was debounced. */
  debounced?: undefined;
  /** Absent: nothing was superseded. */
  superseded?: undefined;
}

/** A debounce push that gave the key's pending message its payload and a later due time. */
export interface KeyedPushDebounced {
  /** The pending message's id. */
  id: string;
  /** Always true. */
  debounced: true;
  /** Absent: see KeyedPushStored. */
  duplicate?: undefined;
  /** Absent. */
  superseded?: undefined;
}

/** A supersede push that gave the key's waiting message its payload. */
export interface KeyedPushSuperseded {
  /** The waiting message's id. */
  id: string;
  /** Always true. */
  superseded: true;
  /** Absent: see KeyedPushStored. */
  duplicate?: undefined;
  /** Absent. */
  debounced?: undefined;
}

/** What a push with a key mode answers: what it did to its key; `id` is the key's message in every case. */
export type KeyedPushResult = KeyedPushStored | KeyedPushDebounced | KeyedPushSuperseded;

/** A message as a consumer receives it; all times are epoch ms on the Redis server's clock. */
export interface QueueMessage<T = unknown> {
  /** The message's id. */
  id: string;
  /** The topic it was pushed to. */
  topic: string;
  /** The payload, as JSON gave it back. */
  payload: T;
  /** String metadata given at push (`{}` when none). */
  headers: Record<string, string>;
  /** 1 on the first delivery, counting every reserve (crashed deliveries too). */
  attempt: number;
  /** Deliveries allowed: the message's own `maxAttempts`, else the reserve's or consumer's. */
  maxAttempts: number;
  /** When it was pushed. */
  enqueuedAt: number;
  /** Its ordered group, when pushed with one. */
  group?: string;
}

/** A message under lease: `token` proves the lease to ack, nack and extendLease. */
export interface ReservedMessage<T = unknown> extends QueueMessage<T> {
  /** Proof of this lease; every delivery gets a new one. */
  token: string;
  /** When the lease runs out unless extended (`extendLease` and heartbeats update it in place). */
  leaseDeadline: number;
  /**
   * When this delivery became due, on a delivery after a retry, a `retryLater` or an expired
   * lease (the retry's due time, or the lease's deadline); absent on a first delivery (it was
   * due at `enqueuedAt`, or after the push's delay).
   */
  dueAt?: number;
  /** @internal Its place in a flow (bits: 1 has a parent, 2 has children); absent outside flows. */
  flowRole?: number;
  /** @internal Its payload and headers as a codec sealed them, until the consumer opens them (see docs/codecs.md). */
  sealed?: string;
}

/** Options of `reserve`. */
export interface ReserveOptions {
  /**
   * Most messages to lease (1-1000).
   * @defaultValue `1`
   */
  count?: number;
  /**
   * Lease length (ms, 10 to 2^31-1).
   * @defaultValue the service's `leaseMs` (30 s unless set)
   */
  leaseMs?: number;
  /**
   * Attempts allowed for messages that carry no maxAttempts (1-1,000,000).
   * @defaultValue the service's `maxAttempts` (5 unless set)
   */
  maxAttempts?: number;
}

/** Options of `nack`. */
export interface NackOptions {
  /**
   * Wait before the next attempt (ms, finite, >= 0).
   * @defaultValue the service's `backoff` for this attempt
   */
  delayMs?: number;
  /** What went wrong; kept with the dead letter after the last attempt. */
  error?: unknown;
}

/** `retry`: it will be delivered again; `dead`: no attempts left; `lost`: the lease was stale. */
export type NackResult = 'retry' | 'dead' | 'lost';

/** How many messages of a topic are in each state (all partitions summed). */
export interface QueueStats {
  /** Waiting to be reserved, counting delayed ones already due and leases already expired. */
  ready: number;
  /** Waiting for their due time. */
  delayed: number;
  /** Under a live lease. */
  leased: number;
  /** Dead letters. */
  dead: number;
  /** The topic is paused (`pause()`): consumers lease nothing until `resume()`. */
  paused: boolean;
  /**
   * Flow parents waiting for their children (`pushFlow`), not counted in `delayed`; present only
   * while there are some.
   */
  waitingChildren?: number;
}

/**
 * Why a message went to the dead letters: `failed` (the handler failed on its last attempt),
 * `expired` (its last lease ran out, or its start-by deadline passed before it started: the
 * error text tells which), `malformed` (its stored body could not be read), or
 * `rejected` (refused without a retry: a guard or pipe refused it, or the handler threw
 * MessageRejectedError), or `child-failed` (a flow's parent whose child went to the dead letters or
 * was cancelled; it comes back when that child is requeued and acked), or `undecodable` (its codec
 * could not decode its payload: changed in Redis, or a key this process lacks; see docs/codecs.md).
 */
export type DeadLetterReason = 'failed' | 'expired' | 'malformed' | 'rejected' | 'child-failed' | 'undecodable';

/** The counts of {@link QueueStats} and the topic's lag, read in one script call per partition. */
export interface QueueGauges extends QueueStats {
  /**
   * Age (ms, server clock) of the oldest ready message, -1 when none is ready: from its
   * enqueue time for one in the ready list (a retried or delayed message that was moved
   * there counts from its push), from its due time or lease deadline for one that is due
   * but not moved yet.
   */
  oldestReadyAgeMs: number;
  /** Completed messages kept (`keepCompleted`; 0 when the topic keeps none). */
  completed: number;
  /**
   * Messages stored by pushes (and schedule ticks) since the topic began, duplicates not
   * counted: a counter in Redis, shared by every process. Its rate is the topic's intake.
   */
  pushedTotal: number;
  /** Messages acked since the topic began: a counter in Redis; its rate is the topic's throughput. */
  ackedTotal: number;
}

/**
 * What a lookup shows of a value a codec sealed (see docs/codecs.md): its size and the key id it
 * names, whether or not this process could open it, and why not when it could not. Neither is
 * secret: an operator without the key sees this in place of the value.
 */
export interface SealedValueInfo {
  /** The bytes the codec wrote (the stored text is their base64). */
  bytes: number;
  /** The id of the key that encrypted it, for a value of `createEncryptionCodec`. */
  keyId?: string;
  /**
   * Why this process could not open it (the value is then left undefined, its headers `{}`):
   * `no-codec` (no codec for its topic here), `unknown-key`, `authentication-failed` (changed in
   * Redis, or a wrong key under its id), `corrupt` or `codec-failed` (see PayloadDecodeError).
   * Absent when it was opened, and on a row listed with `preview` (a preview never opens a value).
   */
  undecodable?: 'authentication-failed' | 'unknown-key' | 'no-codec' | 'corrupt' | 'codec-failed';
}

/** A message that ran out of attempts (or could not be read), kept for inspection. */
export interface DeadLetter<T = unknown> {
  /** The message's id. */
  id: string;
  /** The topic it was pushed to. */
  topic: string;
  /** Why it died; `unknown` only for a record written by something other than this library. */
  reason: DeadLetterReason | 'unknown';
  /** The error text of the last failure. */
  error: string | null;
  /** The number of its last delivery (0 when unknown). */
  attempt: number;
  /**
   * The deliveries that were allowed: recorded when it died (the message's own `maxAttempts`,
   * else its consumer's or handler's, else the module's). Of a letter buried by 0.1.0, which did
   * not record it: the message's own when it carried one, else undefined.
   */
  maxAttempts?: number;
  /** When it died (epoch ms, Redis server clock; 0 when unknown). */
  deadAt: number;
  /** Undefined when the stored body was missing or unreadable. */
  payload: T | undefined;
  /** String metadata given at push (`{}` when none or unreadable). */
  headers: Record<string, string>;
  /** When it was pushed (epoch ms); undefined when the stored body was missing or unreadable. */
  enqueuedAt: number | undefined;
  /**
   * Present when a codec sealed its payload and headers: their size and key id (see
   * {@link SealedValueInfo}); opened into `payload` and `headers` when this process can.
   */
  sealed?: SealedValueInfo;
}

/** Where a message of a flow is: its topic and id. */
export interface FlowRef {
  /** The message's topic. */
  topic: string;
  /** Its id. */
  id: string;
}

/** Why a flow's child failed. */
export interface ChildFailure {
  /** Its dead-letter reason (`failed`, `expired`, `rejected`...), or `cancelled`. */
  reason: string;
  /** The text of its last error, when there was one. */
  error?: string;
}
