import type {
  DeadLetter,
  MessageInfo,
  MessageState,
  RedisAckQueueLookupApi,
  RedisAckQueueProducerApi,
} from '../interfaces';

const PAGE = 10_000;
const ALL_STATES: readonly MessageState[] = ['ready', 'delayed', 'waiting-children', 'leased', 'completed', 'dead'];

/** Options of {@link messagesOf}. */
export interface MessagesOfOptions {
  /**
   * The states to read, in this order.
   * @defaultValue every state: `['ready', 'delayed', 'waiting-children', 'leased', 'completed', 'dead']`
   */
  states?: readonly MessageState[];
}

/**
 * Every message of `topic` that the queue still holds, state by state (each in its `list` order):
 * its id, state, payload (none for a completed one: the queue keeps only its result), headers,
 * attempt, and of a dead letter its error. Reads through the public `list` (pages of 10,000), not
 * atomically: call it once the topic settled (`await queue.waitUntilIdle(topic)`). Acked messages
 * show as `completed` only while the topic keeps them (`keepCompleted`, which
 * `overrideQueueForTesting` turns on).
 * @param queue - The queue's service (`moduleRef.get(RedisAckQueueService)`, or `getQueueToken(name)`).
 * @example
 * ```ts
 * await queue.waitUntilIdle('orders.created');
 * const [message] = await messagesOf(queue, 'orders.created');
 * expect(message.state).toBe('completed');
 * ```
 */
export async function messagesOf<T = unknown>(
  queue: Pick<RedisAckQueueLookupApi, 'list'>,
  topic: string,
  options: MessagesOfOptions = {},
): Promise<MessageInfo<T>[]> {
  const messages: MessageInfo<T>[] = [];
  for (const state of options.states ?? ALL_STATES) {
    for (let offset = 0; ; offset += PAGE) {
      const page = await queue.list<T>(topic, state, { offset, limit: PAGE });
      messages.push(...page);
      if (page.length < PAGE) break;
    }
  }
  return messages;
}

/**
 * Every dead letter of `topic`, oldest first: id, payload, headers, attempt, reason and error
 * text. Reads through the public `deadLetters` (pages of 10,000).
 * @param queue - The queue's service.
 * @example
 * ```ts
 * const [dead] = await deadLettersOf(queue, 'orders.created');
 * expect(dead.error).toContain('card declined');
 * ```
 */
export async function deadLettersOf<T = unknown>(
  queue: Pick<RedisAckQueueProducerApi, 'deadLetters'>,
  topic: string,
): Promise<DeadLetter<T>[]> {
  const letters: DeadLetter<T>[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await queue.deadLetters<T>(topic, { offset, limit: PAGE });
    letters.push(...page);
    if (page.length < PAGE) break;
  }
  return letters;
}
