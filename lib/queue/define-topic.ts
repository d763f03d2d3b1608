import type { Topic } from '../interfaces';
import { assertTopic } from './validation';

/**
 * Names a topic together with its payload type:
 * `export const orderCreated = defineTopic<OrderCreated>('order.created')`. The result is the
 * name itself, usable wherever a topic is; pushing another payload type to it, or consuming
 * it with a handler whose first parameter cannot take `T`, does not compile. The name is
 * checked at once (InvalidTopicError).
 */
export function defineTopic<T>(name: string): Topic<T> {
  assertTopic(name);
  return name;
}
