import {
  FlowIdTakenError,
  InvalidMessageIdError,
  InvalidOptionError,
  InvalidPayloadError,
  InvalidTopicError,
  PayloadTooLargeError,
  RedisAckQueueError,
} from '../errors';
import { errorSummary } from '../errors/error-text';
import type { PushManyItem } from '../interfaces';
import { planFlow } from '../queue/flow-plan';
import { encodePushItem } from '../queue/push-items';
import { assertTopic } from '../queue/validation';
import { type OutboxRow, type OutboxWork, workOf } from './outbox-rows';
import type { DeadRow } from './relay-statements';
import type { RelayPusher } from './relay-pusher';

/** What pushing one claimed batch did. */
export interface BatchOutcome {
  /** Rows now in Redis (pushed, or 'relayed-before'): deleted at commit. */
  pushed: OutboxRow[];
  /** Rows that can never be pushed: marked dead at commit. */
  dead: (DeadRow & { topic: string })[];
  /** Receipts to forget once the commit is done, per topic and partition. */
  receipts: { topic: string; partition: number; receipts: string[] }[];
  /** When each pushed row reached Redis (epoch ms, local clock), in `pushed`'s order. */
  pushedAt: number[];
  /** Why the batch stopped early (Redis unreachable or refusing): the rows after it stay. */
  redisError?: unknown;
}

/** The typed errors of input no push will ever accept: such a row goes dead, not retried. */
const NEVER_PUSHABLE = [
  InvalidOptionError,
  InvalidPayloadError,
  PayloadTooLargeError,
  InvalidMessageIdError,
  InvalidTopicError,
  FlowIdTakenError,
];

/** True for an error a push of the same row would raise again (bad input), false for Redis trouble. */
export function neverPushable(error: unknown): boolean {
  return NEVER_PUSHABLE.some((type) => error instanceof type);
}

/** An error as a relay states it (its code and first line): never a payload, SQL parameter or URL. */
export function relayReason(error: unknown): string {
  const code = error instanceof RedisAckQueueError ? error.code : 'ERROR';
  return `${code} ${errorSummary(error)}`.slice(0, 500);
}

type Checked = { row: OutboxRow; work: OutboxWork };

/**
 * Pushes one claimed batch, in id order: consecutive 'push' rows of one topic in one call, each
 * flow alone. Each row is checked alone first, as push would, so a row no push accepts goes dead
 * without failing its neighbours; a call refused for bad input is tried again row by row to find
 * the one. Redis trouble stops the batch: what was pushed before it is kept as pushed.
 */
export async function pushBatch(
  rows: OutboxRow[],
  pusher: RelayPusher,
  maxPayloadBytes: number,
): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { pushed: [], dead: [], receipts: [], pushedAt: [] };
  const checked: Checked[] = [];
  for (const row of rows) {
    try {
      checked.push({ row, work: checkedWork(row, maxPayloadBytes) });
    } catch (error) {
      if (!neverPushable(error)) throw error;
      outcome.dead.push({ rowId: row.rowId, topic: row.topic, reason: relayReason(error) });
    }
  }
  try {
    for (const group of groups(checked)) await pushGroup(group, pusher, outcome);
  } catch (error) {
    outcome.redisError = error;
  }
  return outcome;
}

function checkedWork(row: OutboxRow, maxPayloadBytes: number): OutboxWork {
  const work = workOf(row);
  if (work.kind === 'flow') planFlow(work.flow, maxPayloadBytes, false);
  else {
    assertTopic(work.topic);
    encodePushItem(work.topic, work.item, maxPayloadBytes, false);
  }
  return work;
}

/** Runs of consecutive 'push' rows of one topic; each flow alone. */
function groups(checked: Checked[]): Checked[][] {
  const runs: Checked[][] = [];
  for (const entry of checked) {
    const last = runs.at(-1)?.[0];
    const joins =
      last !== undefined &&
      last.work.kind === 'push' &&
      entry.work.kind === 'push' &&
      last.work.topic === entry.work.topic;
    if (joins) runs.at(-1)!.push(entry);
    else runs.push([entry]);
  }
  return runs;
}

async function pushGroup(group: Checked[], pusher: RelayPusher, outcome: BatchOutcome): Promise<void> {
  try {
    await pushOnce(group, pusher, outcome);
  } catch (error) {
    if (!neverPushable(error)) throw error;
    if (group.length === 1) {
      const [{ row }] = group;
      outcome.dead.push({ rowId: row.rowId, topic: row.topic, reason: relayReason(error) });
      return;
    }
    // A call refused for input checked row by row: only Redis knows why (a flow's id taken...).
    for (const entry of group) await pushGroup([entry], pusher, outcome);
  }
}

async function pushOnce(group: Checked[], pusher: RelayPusher, outcome: BatchOutcome): Promise<void> {
  const [first] = group;
  if (first.work.kind === 'flow') {
    const { partition } = await pusher.pushFlowRelayed(first.work.flow, first.row.receipt);
    done(outcome, first.row.topic, [{ row: first.row, partition }]);
    return;
  }
  const items = group.map((entry) => (entry.work as { item: PushManyItem }).item);
  const results = await pusher.pushRelayed(
    first.work.topic,
    items,
    group.map((entry) => entry.row.receipt),
  );
  done(
    outcome,
    first.work.topic,
    group.map((entry, i) => ({ row: entry.row, partition: results[i].partition })),
  );
}

function done(outcome: BatchOutcome, topic: string, pushed: { row: OutboxRow; partition: number }[]): void {
  const now = Date.now();
  for (const { row, partition } of pushed) {
    outcome.pushed.push(row);
    outcome.pushedAt.push(now);
    let entry = outcome.receipts.find((found) => found.topic === topic && found.partition === partition);
    if (!entry) outcome.receipts.push((entry = { topic, partition, receipts: [] }));
    entry.receipts.push(row.receipt);
  }
}
