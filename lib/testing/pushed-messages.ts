import { InvalidOptionError } from '../errors';
import type {
  Flow,
  FlowNodeOptions,
  FlowRef,
  FlowResult,
  KeyedPushResult,
  PushOptions,
  RedisAckQueueFlowApi,
  RedisAckQueueProducerApi,
} from '../interfaces';

/** One message a test's app pushed, as `pushedTo` reports it. */
export interface PushedMessage<T = unknown> {
  /** The topic it was pushed to. */
  topic: string;
  /** Its id: the caller's, or the one the queue made. */
  id: string;
  /** The payload, as the queue stored it (a JSON copy taken when the push resolved). */
  payload: T;
  /**
   * The push's options (`headers`, `delayMs`, `priority`, `group`...), as given; `{}` when none.
   * For a node of a flow, the node's `options` (with its `onChildFailure`).
   */
  options: PushOptions | FlowNodeOptions;
  /** True when the queue refused it as a duplicate of an id it still held (or a throttled key's window). */
  duplicate: boolean;
  /** For a child of a flow pushed with `pushFlow`: its parent's topic and id. */
  parent?: FlowRef;
}

type Producer = Pick<RedisAckQueueProducerApi, 'push' | 'pushMany'> & Pick<RedisAckQueueFlowApi, 'pushFlow'>;

/** The pushes recorded per service: only services built under `overrideQueueForTesting` have an entry. */
const recorded = new WeakMap<object, PushedMessage[]>();

/**
 * Records every push, pushMany and pushFlow the service resolves, in order, by wrapping the
 * three methods of this one instance (a test's service only): what was pushed stays readable
 * after its handler acked it, when the queue keeps no payload (a topic without keepCompleted).
 * A push that rejects records nothing.
 */
export function recordPushes(service: Producer): void {
  if (recorded.has(service)) return;
  const log: PushedMessage[] = [];
  recorded.set(service, log);
  const push = service.push.bind(service);
  const pushMany = service.pushMany.bind(service);
  const pushFlow = service.pushFlow.bind(service);
  const note = (
    topic: string,
    payload: unknown,
    options: PushedMessage['options'] | null | undefined,
    result: KeyedPushResult,
  ) =>
    log.push({
      topic,
      id: result.id,
      payload: copyOf(payload),
      options: { ...options },
      duplicate: result.duplicate === true,
    });
  /** A flow's nodes parent first, children in the order given (the result mirrors the flow's shape). */
  const noteFlow = (flow: Flow, result: FlowResult, parent?: FlowRef) => {
    note(flow.topic, flow.payload, flow.options, result);
    if (parent) log[log.length - 1].parent = parent;
    flow.children?.forEach((child, i) => noteFlow(child, result.children[i], { topic: result.topic, id: result.id }));
  };
  Object.assign(service, {
    push: async (topic: string, payload: unknown, options?: PushOptions | null) => {
      const result = await push(topic, payload, options);
      note(topic, payload, options, result);
      return result;
    },
    pushMany: async (topic: string, items: ({ payload: unknown } & PushOptions)[]) => {
      const results = await pushMany(topic, items);
      results.forEach((result, i) => {
        const { payload, ...options } = items[i];
        note(topic, payload, options, result);
      });
      return results;
    },
    pushFlow: async (flow: Flow) => {
      const result = await pushFlow(flow);
      noteFlow(flow, result);
      return result;
    },
  });
}

/**
 * What the app under test pushed to `topic` through this queue, in push order, duplicates
 * included (`duplicate: true`): the payloads and options as given, whatever became of the
 * messages since (acked, dead, still waiting). Counts the pushes of the app's own service from
 * its start (`push`, `pushMany`, and each node of a `pushFlow`); not those of other processes,
 * nor schedule ticks. Async, as the other readers of `nestjs-redis-ack-queue/testing` are.
 * @param queue - The service of an app built with `overrideQueueForTesting` (`moduleRef.get(RedisAckQueueService)`).
 * @param topic - The topic.
 * @throws {InvalidOptionError} (the promise rejects) when `queue` is not the service of such an app.
 * @example
 * ```ts
 * await request(app.getHttpServer()).post('/orders').send({ item: 'book' });
 * expect((await pushedTo(queue, 'order.created')).map(({ payload }) => payload)).toEqual([{ item: 'book' }]);
 * ```
 */
export function pushedTo<T = unknown>(queue: object, topic: string): Promise<PushedMessage<T>[]> {
  const log = recorded.get(queue);
  if (!log)
    return Promise.reject(
      new InvalidOptionError('queue', queue, 'the service of an app built with overrideQueueForTesting()'),
    );
  return Promise.resolve(log.filter((message) => message.topic === topic) as PushedMessage<T>[]);
}

/** The payload as the queue stored it: JSON (push refused anything JSON would change). */
function copyOf(payload: unknown): unknown {
  return payload === undefined ? undefined : JSON.parse(JSON.stringify(payload));
}
