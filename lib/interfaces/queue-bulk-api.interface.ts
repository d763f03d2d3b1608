import type { MessageFilter, MessageState } from './queue-lookup-api.interface';

/**
 * What a bulk action does to each message it selected: `requeue` a dead letter (back to ready,
 * attempts reset), `cancel` it (as `cancel` does), `purge` a dead letter or completed record
 * (deleted for good), `replay` a completed or dead message (a copy is pushed, with a new id;
 * the original stays).
 */
export type BulkAction = 'requeue' | 'cancel' | 'purge' | 'replay';

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
  action: BulkAction;
  /** Where it stands. */
  state: BulkState;
  /** How many messages it selected. */
  selected: number;
  /**
   * How many of them it has dealt with so far: acted on, or passed over because they had left
   * the selected state in the meantime (see `skipped`).
   */
  processed: number;
  /** Of `processed`, those passed over: no longer in the selected state when their turn came. */
  skipped: number;
  /** When it was started (epoch ms, Redis server clock). */
  createdAt: number;
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
}
