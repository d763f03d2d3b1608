import { InvalidOptionError } from '../errors';
import type { KeyedPushResult, PushOptions, RedisAckQueueProducerApi } from '../interfaces';

/** One message a test's app pushed, as `pushedTo` reports it. */
export interface PushedMessage<T = unknown> {
  /** The topic it was pushed to. */
  topic: string;
  /** Its id: the caller's, or the one the queue made. */
  id: string;
  /** The payload, as the queue stored it (a JSON copy taken when the push resolved). */
  payload: T;
  /** The push's options (`headers`, `delayMs`, `priority`, `group`...), as given; `{}` when none. */
  options: PushOptions;
  /** True when the queue refused it as a duplicate of an id it still held (or a throttled key's window). */
  duplicate: boolean;
}

type Producer = Pick<RedisAckQueueProducerApi, 'push' | 'pushMany'>;

/** The pushes recorded per service: only services built under `overrideQueueForTesting` have an entry. */
const recorded = new WeakMap<object, PushedMessage[]>();

/**
 * Records every push and pushMany the service resolves, in order, by wrapping the two methods of
 * this one instance (a test's service only): what was pushed stays readable after its handler
 * acked it, when the queue keeps no payload. A push that rejects records nothing.
 */
export function recordPushes(service: Producer): void {
  if (recorded.has(service)) return;
  const log: PushedMessage[] = [];
  recorded.set(service, log);
  const push = service.push.bind(service);
  const pushMany = service.pushMany.bind(service);
  const note = (topic: string, payload: unknown, options: PushOptions | null | undefined, result: KeyedPushResult) =>
    log.push({
      topic,
      id: result.id,
      payload: copyOf(payload),
      options: { ...options },
      duplicate: result.duplicate === true,
    });
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
  });
}

/**
 * What the app under test pushed to `topic` through this queue, in push order, duplicates
 * included (`duplicate: true`): the payloads and options as given, whatever became of the
 * messages since (acked, dead, still waiting). Counts the pushes of the app's own service from
 * its start; not those of other processes, nor schedule ticks.
 * @param queue - The service of an app built with `overrideQueueForTesting` (`moduleRef.get(RedisAckQueueService)`).
 * @param topic - The topic.
 * @throws {InvalidOptionError} when `queue` is not the service of such an app.
 * @example
 * ```ts
 * await request(app.getHttpServer()).post('/orders').send({ item: 'book' });
 * expect(pushedTo(queue, 'order.created').map(({ payload }) => payload)).toEqual([{ item: 'book' }]);
 * ```
 */
export function pushedTo<T = unknown>(queue: object, topic: string): PushedMessage<T>[] {
  const log = recorded.get(queue);
  if (!log) throw new InvalidOptionError('queue', queue, 'the service of an app built with overrideQueueForTesting()');
  return log.filter((message) => message.topic === topic) as PushedMessage<T>[];
}

/** The payload as the queue stored it: JSON (push refused anything JSON would change). */
function copyOf(payload: unknown): unknown {
  return payload === undefined ? undefined : JSON.parse(JSON.stringify(payload));
}
