import type { MessageInfo, RedisAckQueueKeyMode, RedisAckQueueService, ReservedMessage } from '../../../lib';
import type { ModelState, QueueModel } from './queue-model';

/** The system under test: one service, one fresh topic, and the lease handles the test holds. */
export interface RealQueue {
  queue: RedisAckQueueService;
  topic: string;
  handles: Map<string, ReservedMessage>;
}

const LISTED_STATES: ModelState[] = ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children'];

/** What `get` must show of a message, from the model. */
function expectedInfo(model: QueueModel, id: string): Partial<MessageInfo> | null {
  const message = model.get(id);
  if (!message) return null;
  const live = message.state === 'ready' || message.state === 'delayed' || message.state === 'leased';
  return {
    id,
    state: message.state,
    // A completed message's record keeps its payload beside its result (docs/lookup.md).
    payload: message.payload,
    attempt: message.attempt,
    maxAttempts: message.maxAttempts,
    ...(live && message.key
      ? { key: message.key.name, mode: message.key.mode.replace(/-.*/, '') as RedisAckQueueKeyMode }
      : {}),
  };
}

function shown(info: MessageInfo | null, withKey: boolean): Partial<MessageInfo> | null {
  if (!info) return null;
  const { id, state, payload, attempt, maxAttempts, key, mode } = info;
  return { id, state, payload, attempt, maxAttempts, ...(withKey && key !== undefined ? { key, mode } : {}) };
}

/**
 * Compares what the API answers with the model: `get` of every id the run has seen, `list` of every
 * state (the ready list in serving order, the others as sets: their order rests on server times that
 * can tie), and `stats`.
 */
export async function expectAgreement(model: QueueModel, real: RealQueue, seen: Iterable<string>): Promise<void> {
  const { queue, topic } = real;
  const ids = [...new Set([...seen, ...model.ids()])].sort();
  const infos = await Promise.all(ids.map((id) => queue.get(topic, id)));
  expect(ids.map((id, i) => shown(infos[i], true))).toEqual(ids.map((id) => expectedInfo(model, id)));

  const lists = await Promise.all(LISTED_STATES.map((state) => queue.list(topic, state, { limit: 1000 })));
  const listed = Object.fromEntries(
    LISTED_STATES.map((state, i) => {
      const listIds = lists[i].map((info) => info.id);
      return [state, state === 'ready' ? listIds : listIds.sort()];
    }),
  );
  const modelled = Object.fromEntries(
    LISTED_STATES.map((state) => [
      state,
      state === 'ready'
        ? model.readyInOrder().map((m) => m.id)
        : model
            .inState(state)
            .map((m) => m.id)
            .sort(),
    ]),
  );
  expect(listed).toEqual(modelled);

  const { ready, delayed, leased, dead, paused, waitingChildren } = await queue.stats(topic);
  expect({ ready, delayed, leased, dead, paused, ...(waitingChildren ? { waitingChildren } : {}) }).toEqual(
    model.stats(),
  );
}
