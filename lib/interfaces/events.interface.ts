import type { DeadLetterReason, RedisAckQueueOnExpire } from './message.interface';

/**
 * `pushed`: a message was stored (not a duplicate). `reserved`: leased, by `reserve()` or a
 * consumer. `acked`: done and removed. `retried`: failed, to be delivered again after its
 * backoff. `dead`: moved to the dead letters after its last failure, or as `malformed` (one
 * whose last lease expired makes no event). `lease-lost`: a running handler's lease expired.
 * `error`: a consumer's call to Redis failed (reserving pauses and retries; a message whose
 * ack or nack failed is delivered again once its lease runs out). `deferred`: a handler asked
 * to retry later (`context.retryLater` or `RetryLaterError`): back to delayed without counting
 * the attempt (past `maxDeferrals` it counts, and the event is `retried` or `dead` instead).
 * `cancelled`: `cancel()` removed a message (from the service that cancelled it). `progress`:
 * a handler's `context.progress` value was stored (from the consumer; the value itself is not
 * in the event). `expired`: a message's start-by deadline passed before it started, so it never
 * will: it became a dead letter (reason `expired`) or was dropped, as `onExpire` says (from the
 * consumer, or the `reserve()` call, that found it; see docs/deadlines.md).
 */
export type RedisAckQueueEventType =
  | 'pushed'
  | 'reserved'
  | 'acked'
  | 'retried'
  | 'dead'
  | 'lease-lost'
  | 'error'
  | 'deferred'
  | 'cancelled'
  | 'progress'
  | 'expired';

/**
 * One entry of `service.events$`. Never carries payloads. The events of this service only, in
 * this process: for every process's, see the `fleetEvents` option and `fleetEvents$()`.
 */
export interface RedisAckQueueEvent {
  /** What happened. */
  type: RedisAckQueueEventType;
  /** The topic it happened on. */
  topic: string;
  /** The message's id; absent on an error that concerns no single message. */
  id?: string;
  /** The delivery's number; absent on `pushed` and where `id` is absent. */
  attempt?: number;
  /** On `dead`: why it went to the dead letters, as its dead letter says; on `expired`: `expired` when it became a dead letter. */
  reason?: DeadLetterReason;
  /** On `expired`: what the message became, a dead letter (`'dead-letter'`) or nothing (`'drop'`). */
  onExpire?: RedisAckQueueOnExpire;
  /** For retried, dead, lease-lost and error events. */
  error?: Error;
  /**
   * On `acked`, `retried` and `dead` from a consumer: how long the handler ran (ms, this
   * process's monotonic clock, from its start until it resolved, threw or timed out).
   */
  durationMs?: number;
  /**
   * On `acked`, `retried` and `dead` from a consumer: ms from when the delivery became due
   * to the reserve that leased it, both on the Redis server's clock (the few ms a message
   * may then spend in the consumer's prefetch are not counted). On a first delivery that is
   * from the push (`enqueuedAt`: a push with `delayMs` or `availableAt` includes its delay);
   * on a later one, from its retry's due time (after the backoff, a `retryLater`, or the
   * deadline of a lease that expired). So a `dead` event after the last attempt carries the
   * wait of that attempt.
   */
  waitMs?: number;
  /** On `deferred`: the wait before the next delivery (ms). */
  delayMs?: number;
}

/**
 * One entry of the fleet-wide event stream (`fleetEvents$()`): an event of any process of the
 * prefix that runs with the `fleetEvents` option. Only what identifies the message and what
 * happened: never a payload, a header, an error's text or a progress value.
 */
export interface RedisAckQueueFleetEvent {
  /** What happened. */
  type: RedisAckQueueEventType;
  /** The topic it happened on. */
  topic: string;
  /** The message's id; absent on an error that concerns no single message. */
  id?: string;
  /** The delivery's number, where the process's own event has one. */
  attempt?: number;
  /** On `dead`: why it went to the dead letters; on `expired`: `expired` when it became a dead letter. */
  reason?: DeadLetterReason;
  /** On `expired`: what the message became, a dead letter or nothing (see RedisAckQueueEvent). */
  onExpire?: RedisAckQueueOnExpire;
  /** When Redis stored it: ms since the epoch on the Redis server's clock (the time of `streamId`). */
  at: number;
  /** The process that saw it happen: `<hostname>:<pid>`. */
  origin: string;
  /** Its entry in the stream: pass it as `from` to read on after it (e.g. after a restart). */
  streamId: string;
}

/** Options of `fleetEvents$()`. */
export interface RedisAckQueueFleetEventsOptions {
  /**
   * Where to start: `'now'` (what is appended after the subscription), `'start'` (the oldest
   * entry the capped stream still holds), or a `streamId` to read on after it.
   * @defaultValue `'now'`
   */
  from?: string;
}

/**
 * A value named like the interface {@link RedisAckQueueEvent}, so that a plain `import { RedisAckQueueEvent }` works in a decorated
 * signature under `isolatedModules` with `emitDecoratorMetadata` (as `nest new` sets them), where an
 * interface alone needs `import type`. TypeScript records the parameter as `Object`, as for any
 * interface; nothing is an instance of this marker.
 */
export const RedisAckQueueEvent: unique symbol = Symbol('nestjs-redis-ack-queue:RedisAckQueueEvent');
