import type { Flow, FlowResult, PushManyItem } from '../interfaces';
import type { RelayedPush } from '../queue/queue-producer';

export type { RelayedPush };

/** What a relayed flow did, as RelayedPush (its partition: the root's). */
export interface RelayedFlow {
  result: FlowResult | 'relayed-before';
  partition: number;
}

/**
 * How the relay pushes (the queue's producer and flows, with receipts): each push stores its
 * row's receipt in Redis atomically with the message, and refuses a receipt it already holds, so a
 * row pushed before its delete is never pushed twice. Receipts are forgotten once the rows are gone.
 */
export interface RelayPusher {
  /** pushMany, one receipt per item, in order. Throws as pushMany does. */
  pushRelayed(topic: string, items: PushManyItem[], receipts: string[]): Promise<RelayedPush[]>;
  /** pushFlow with the row's receipt on its root. Throws as pushFlow does. */
  pushFlowRelayed(flow: Flow, receipt: string): Promise<RelayedFlow>;
  /** Drops receipts whose rows were deleted (their commit is done). */
  forgetReceipts(topic: string, partition: number, receipts: string[]): Promise<void>;
}
