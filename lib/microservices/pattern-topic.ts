import { createHash } from 'node:crypto';
import { LIMITS } from '../common/redis-ack-queue.constants';

const TOPIC_NAME = /^[A-Za-z0-9._:-]+$/;

/**
 * The topic a message pattern of `@EventPattern`, `@MessagePattern`, `emit` and `send` stands
 * for, the same in every process and Nest version:
 * - a string (or number) that is a valid topic name (1-200 characters of A-Z a-z 0-9 . _ - :)
 *   is that topic: `'order.created'` is the topic `order.created`;
 * - any other pattern (`{ cmd: 'sum' }`, a string with other characters) is
 *   `pattern.<words>.<hash>`: its letters and digits joined by `_` (at most 60 characters),
 *   then the first 16 hex digits of the SHA-256 of its canonical JSON (object keys sorted):
 *   `{ cmd: 'sum' }` is `pattern.cmd_sum.<16 hex>`;
 * - a string that is an object's JSON (`'{"cmd":"sum"}'`) is that object's topic, as Nest
 *   routes the two alike (a handler's route is that text, whichever of the two it declared).
 * @param pattern - A message pattern: a string, a number, or a JSON object.
 * @returns The topic's name.
 */
export function topicOfPattern(pattern: unknown): string {
  const text = typeof pattern === 'number' ? String(pattern) : pattern;
  if (typeof text === 'string' && text.length <= LIMITS.topicLength && TOPIC_NAME.test(text)) return text;
  const canonical = canonicalJson(typeof text === 'string' ? patternOfRoute(text) : text);
  const words = canonical
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60)
    .replace(/_+$/, '');
  const hash = createHash('sha256').update(canonical).digest('hex').slice(0, 16);
  return words === '' ? `pattern.${hash}` : `pattern.${words}.${hash}`;
}

/**
 * The pattern a route stands for: Nest keys handlers by the pattern's route (the string
 * itself, or the object's JSON with sorted keys), which is read back here.
 */
function patternOfRoute(route: string): unknown {
  if (!route.startsWith('{')) return route;
  try {
    return JSON.parse(route) as unknown;
  } catch {
    return route;
  }
}

/**
 * JSON with object keys sorted at every depth: one text per pattern, whatever the key order.
 * An array counts as the object of its indexes, as Nest's routes spell it (a server reads the
 * route back, a client has the pattern itself: both must give the same text).
 */
function canonicalJson(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
