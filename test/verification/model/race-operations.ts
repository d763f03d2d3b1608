import { isDeepStrictEqual } from 'node:util';
import type { RedisAckQueueService, ReservedMessage } from '../../../lib';
import { HOUR_MS, LEASE_MS } from './queue-commands';
import type { QueueModel } from './queue-model';

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
