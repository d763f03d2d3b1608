import type { MessageFilter, MessageState } from './queue-lookup-api.interface';

/**
 * What a bulk action does to each message it selected: `requeue` a dead letter (back to ready,
 * attempts reset), `cancel` it (as `cancel` does), `purge` a dead letter or completed record
 * (deleted for good), `replay` a completed or dead message (a copy is pushed, with a new id;
 * the original stays).
 */
export type BulkAction = 'requeue' | 'cancel' | 'purge' | 'replay';

/**
 * What a bulk action does, as `bulkStatus` reports it: one of `bulk`'s actions, or `reencrypt`
 * (started by `reencrypt`: every stored value of the topic sealed again under its codec's
 * current key).
 */
export type BulkActionKind = BulkAction | 'reencrypt';

/** The messages a bulk action selects: a state and a filter, as `list` takes them. */
export interface BulkFilter extends MessageFilter {
  /**
   * The state selected.
   * @defaultValue `'dead'`
   */
  state?: MessageState;
}

/** Options of `bulk`. */
export interface BulkOptions {
  /** What to do to each selected message. */
  action: BulkAction;
  /** Which messages: those of `filter.state` matching the rest of it, when `bulk` was called. */
  filter?: BulkFilter;
  /**
   * At most this many messages per second (1-1,000,000), so a bulk action never starves the
   * topic's own traffic.
   * @defaultValue `50_000`
   */
  maxPerSecond?: number;
}

/** What `bulk` answers at once, before the action runs. */
export interface BulkStarted {
  /** The bulk action's id: `bulkStatus(id)`, `abortBulk(id)`. */
  id: string;
  /** How many messages it selected (the set is fixed when `bulk` is called). */
  selected: number;
}

/** Where a bulk action stands: `running` (or waiting for a runner), `done`, or `aborted`. */
export type BulkState = 'running' | 'done' | 'aborted';

/** A bulk action as `bulkStatus` reports it. */
export interface BulkStatus {
  /** Its id. */
  id: string;
  /** The topic it acts on. */
  topic: string;
  /** What it does. */
  action: BulkActionKind;
  /** Where it stands. */
  state: BulkState;
  /** How many messages it selected. */
  selected: number;
  /**
   * How many of them it has dealt with so far: acted on, or passed over because they had left
   * the selected state in the meantime (see `skipped`).
   */
  processed: number;
  /**
   * Of `processed`, those passed over: no longer in the selected state when their turn came. For
   * `reencrypt`, the values left as they were: already under the current key, gone (acked or
   * removed) before their turn, or not opened (see `failed`).
   */
  skipped: number;
  /**
   * `reencrypt` only: of `skipped`, the values its codec could not open (a key it lacks, a value
   * changed in Redis). They are left as they are, never deleted; a consumer dead-letters such a
   * message as `undecodable`.
   */
  failed?: number;
  /** When it was started (epoch ms, Redis server clock). */
  createdAt: number;
}

/** Options of `reencrypt`. */
export interface ReencryptOptions {
  /**
   * At most this many values per second (1-1,000,000), so it never starves the topic's own traffic.
   * @defaultValue `50_000`
   */
  maxPerSecond?: number;
}

/**
 * Acting on every message of a topic that a filter selects, as a job that survives the process
 * running it: the bulk part of `RedisAckQueueService`. See docs/bulk.md.
 */
export interface RedisAckQueueBulkApi {
  /**
   * Selects the messages of `filter.state` matching `filter` now and starts acting on them;
   * resolves at once with the bulk action's id and how many it selected.
   */
  bulk(topic: string, options: BulkOptions): Promise<BulkStarted>;
  /** Where a bulk action stands; null when no bulk action has this id (or its record expired). */
  bulkStatus(id: string): Promise<BulkStatus | null>;
  /** Stops a running bulk action; resolves true when it was running. */
  abortBulk(id: string): Promise<boolean>;
  /**
   * Seals every value stored for `topic` (the bodies of its messages in every state, dead letters
   * included, and its completed records) again under the topic's codec as this service has it:
   * after a key rotation, values under an older key move to the current one; plain values are
   * sealed (encryption turned on for what was stored before). It runs as a bulk action that
   * survives the process running it: resolves at once with its id (and how many values it
   * selected), and `bulkStatus(id)` reports it. Only a process whose codec for the topic has the
   * same current key runs it. A value already under the current key is passed over; one that
   * cannot be opened is left as it is (`failed`); one acked meanwhile is not missed. Switch every
   * writer to the new key first: what an older writer stores after the call is not selected.
   * See docs/codecs.md.
   * @throws {ReencryptWithoutCodecError} when this service has no codec for `topic`.
   * @throws {InvalidOptionError} when `maxPerSecond` is out of range.
   */
  reencrypt(topic: string, options?: ReencryptOptions): Promise<BulkStarted>;
}
