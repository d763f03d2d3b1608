import type { ReservedMessage } from '../interfaces';
import type { DeliveryTrace } from '../observability/tracing/queue-tracing';
import type { DeliveryTimings } from './delivery-timings';
import type { ContextTarget } from './handler-context';

/** A message whose handler runs now. */
export interface InFlight<T> extends ContextTarget, DeliveryTimings {
  message: ReservedMessage<T>;
  /** Ack or nack under way: a heartbeat miss is then no lost lease. */
  settling: boolean;
  /** Handed back at shutdown, or cancelled: the handler's late outcome no longer counts. */
  released: boolean;
  /**
   * Cancelled from any process: once its handler returns it is acked anyway (the ack is refused),
   * which tells a message that superseded it (same key) that it may start.
   */
  cancelled: boolean;
  lost: boolean;
  /** performance.now() when the handler started. */
  started: number;
  /**
   * Set when its ack must go through complete.lua (not along with a reserve): the end of its
   * completed record (duration, result) where the topic keeps them, '{}' when it reported progress.
   */
  completion?: string;
  /** A result's JSON its topic's codec seals before the ack (see DeliveryControl.sendAcks). */
  resultToSeal?: string;
  /** With tracing: the context its handler runs in and its span, ended when the handler settles. */
  trace?: DeliveryTrace;
}

/** What a LeaseKeeper reports to the consumer that wires it (TopicConsumer): it calls nothing back. */
export interface KeeperHooks<T> {
  /** A handler settled after running `ms`: its slot is free. */
  finished(ms: number): void;
  /** A handler's rateLimited held the whole topic (its message has no group) for `ms`. */
  held(ms: number): void;
  /** A handler resolved (or a cancelled one returned, as a signal): its ack joins the ack batch. */
  completed(entry: InFlight<T>): void;
}

/** The entry of a handler that starts now. */
export function newInFlight<T>(message: ReservedMessage<T>): InFlight<T> {
  return {
    message,
    controller: undefined,
    settling: false,
    released: false,
    cancelled: false,
    lost: false,
    started: performance.now(),
  };
}

/** The messages of in-flight entries, as the engine takes them. */
export function messagesOf<T>(entries: InFlight<T>[]): ReservedMessage<T>[] {
  return entries.map((entry) => entry.message);
}
