import type { DeadLetterReason, RedisAckQueueOnExpire } from '../interfaces';

/** How a delivery ended, as a tally counts it. */
export type SettledOutcome = 'acked' | 'retried' | 'dead';

/**
 * What a recorder of counts hears (the history, metrics): plain numbers in calls, no event
 * object per message, so it costs next to nothing on the hot path. Called in the process
 * where it happened: by the producer, the consumers and cancel().
 */
export interface DeliveryTally {
  /** `count` messages were stored on `topic` (duplicates are not). */
  pushed(topic: string, count: number): void;
  /**
   * One delivery ended: the handler's run time and the delivery's wait (see
   * RedisAckQueueEvent's `durationMs` and `waitMs`), where known. `endedAt`: when its handler
   * ended, on `performance.now()`'s clock, where the caller read it already (a clock read costs
   * more than the rest of a count). `group`: the message's ordered group, where the caller knows
   * it (a delivery it settled), so usage is counted per group.
   */
  settled(
    topic: string,
    outcome: SettledOutcome,
    durationMs: number | undefined,
    waitMs: number | undefined,
    reason?: DeadLetterReason,
    endedAt?: number,
    group?: string,
  ): void;
  /** `count` messages were removed by cancel(). */
  cancelled(topic: string, count: number): void;
  /**
   * A running handler's lease was lost (rare). Optional: a recorder that counts it hears it here
   * rather than on `events$`, since any subscriber there makes every delivery build its events.
   */
  leaseLost?(topic: string): void;
  /**
   * A message's start-by deadline passed before it started, and it ended as `onExpire` says (a
   * dead letter is told to `settled` as `dead` too). Optional, as `leaseLost`.
   */
  expired?(topic: string, onExpire: RedisAckQueueOnExpire): void;
}

/** Every tally of one service, called in turn. */
export class DeliveryTallies implements DeliveryTally {
  private sinks: DeliveryTally[] = [];

  /** True while some tally listens: then consumers measure waits even with nobody on events$. */
  get active(): boolean {
    return this.sinks.length > 0;
  }

  /** Adds `sink`; returns what removes it. */
  add(sink: DeliveryTally): () => void {
    this.sinks = [...this.sinks, sink];
    return () => (this.sinks = this.sinks.filter((s) => s !== sink));
  }

  pushed(topic: string, count: number): void {
    if (count > 0) for (const sink of this.sinks) sink.pushed(topic, count);
  }

  settled(
    topic: string,
    outcome: SettledOutcome,
    durationMs: number | undefined,
    waitMs: number | undefined,
    reason?: DeadLetterReason,
    endedAt?: number,
    group?: string,
  ): void {
    for (const sink of this.sinks) sink.settled(topic, outcome, durationMs, waitMs, reason, endedAt, group);
  }

  cancelled(topic: string, count: number): void {
    if (count > 0) for (const sink of this.sinks) sink.cancelled(topic, count);
  }

  leaseLost(topic: string): void {
    for (const sink of this.sinks) sink.leaseLost?.(topic);
  }

  expired(topic: string, onExpire: RedisAckQueueOnExpire): void {
    for (const sink of this.sinks) sink.expired?.(topic, onExpire);
  }
}
