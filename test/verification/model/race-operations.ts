import { isDeepStrictEqual } from 'node:util';
import type { RedisAckQueueService, ReservedMessage } from '../../../lib';
import { HOUR_MS, LEASE_MS } from './queue-commands';
import { QueueModel } from './queue-model';

/** The one message every race is about. */
export const RACED_ID = 'm';

/** The settles of a race use the handle of the message's first lease, taken before the race. */
const RACED_LEASE = 1;

export type RaceKind = 'cancel' | 'resolve' | 'reject' | 'release' | 'push' | 'take';

/** One operation of a race, sent by one of two services (two connections: Redis may run them in another order than sent). */
export interface RaceOperation {
  kind: RaceKind;
  service: 0 | 1;
  payload: number;
}

export interface RaceReal {
  services: RedisAckQueueService[];
  topic: string;
  /** The lease handle the race's settles use (taken before the race). */
  handle?: ReservedMessage;
}

/** What the library answered, in a form the model's answer can equal. */
export async function runOperation(real: RaceReal, operation: RaceOperation): Promise<unknown> {
  const queue = real.services[operation.service];
  const { topic, handle } = real;
  switch (operation.kind) {
    case 'cancel':
      return queue.cancel(topic, RACED_ID);
    case 'resolve':
      return queue.ack(handle!);
    case 'reject':
      return queue.nack(handle!, { delayMs: HOUR_MS, error: new Error('rejected by the test') });
    case 'release':
      return queue.release(handle!);
    case 'push': {
      const { id, duplicate } = await queue.push(topic, operation.payload, { id: RACED_ID, maxAttempts: 2 });
      return { id, duplicate };
    }
    case 'take':
      return (await queue.reserve(topic, { leaseMs: LEASE_MS })).map(({ id, attempt }) => ({ id, attempt }));
  }
}

/** What the model answers to the same operation, moving as the library must. */
export function applyOperation(model: QueueModel, operation: RaceOperation): unknown {
  switch (operation.kind) {
    case 'cancel':
      return model.cancel(RACED_ID);
    case 'resolve':
      return model.ack(RACED_ID, RACED_LEASE);
    case 'reject':
      return model.nack(RACED_ID, RACED_LEASE);
    case 'release':
      return model.release(RACED_ID, RACED_LEASE);
    case 'push':
      return model.push(
        { id: RACED_ID, payload: operation.payload, delayed: false, priority: 0, maxAttempts: 2 },
        RACED_ID,
      );
    case 'take':
      return model.reserve(1).map(({ id, attempt }) => ({ id, attempt }));
  }
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/**
 * Every sequential order of the race's operations that explains what they answered: the model
 * after each such order (empty when no order does, i.e. the outcome is not linearizable).
 */
export function linearizations(before: QueueModel, operations: RaceOperation[], answers: unknown[]): QueueModel[] {
  const explaining: QueueModel[] = [];
  for (const order of permutations(operations.map((_, i) => i))) {
    const model = before.clone();
    const modelled: unknown[] = [];
    for (const i of order) modelled[i] = applyOperation(model, operations[i]);
    if (isDeepStrictEqual(modelled, answers)) explaining.push(model);
  }
  return explaining;
}

/** What a consumer's delivery of the raced message may show when a cancel runs at one point of it. */
export interface DeliveryOutcome {
  cancelled: unknown;
  /** The outcome events the consumer may emit for the message (`acked`, `retried`, `dead`). */
  events: string[];
  /** Whether the handler ran, may have run (leased when cancelled: it may start before its signal aborts), or did not. */
  handler: 'ran' | 'may run' | 'not run';
}

/**
 * Every outcome of a delivery (take, then the handler's outcome settles it) with a cancel before,
 * during or after it: the model's answers in each of the three sequential orders.
 */
export function deliveryOutcomes(maxAttempts: number, resolves: boolean): DeliveryOutcome[] {
  const outcomeEvent: Record<string, string | undefined> = { true: 'acked', retry: 'retried', dead: 'dead' };
  return [0, 1, 2].map((cancelAt) => {
    const model = new QueueModel();
    model.push({ id: RACED_ID, payload: 0, delayed: false, priority: 0, maxAttempts }, RACED_ID);
    let cancelled: unknown;
    const events: string[] = [];
    const steps = ['take', 'settle'];
    steps.splice(cancelAt, 0, 'cancel');
    for (const step of steps) {
      if (step === 'cancel') cancelled = model.cancel(RACED_ID);
      else if (step === 'take') model.reserve(1);
      else if (model.handleIds().length > 0) {
        const settled = String(resolves ? model.ack(RACED_ID) : model.nack(RACED_ID));
        if (outcomeEvent[settled]) events.push(outcomeEvent[settled]);
      }
    }
    return { cancelled, events, handler: cancelAt === 0 ? 'not run' : cancelAt === 1 ? 'may run' : 'ran' };
  });
}
