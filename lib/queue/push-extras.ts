import { LIMITS } from '../common/redis-ack-queue.constants';
import { InvalidOptionError } from '../errors';
import type { PushOptionsBase } from '../interfaces';
import { toEpochMs } from './validation';

/** Control characters: a tag holds none (NUL joins a message's tags in Redis). */
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A push's start-by deadline and tags, checked and encoded as push.lua's extras
 * (`<deadline>\n<onExpire>\n<tags>`, read by prelude-extras.lua); undefined when it has neither.
 * Whether the deadline lies after the message's due time is judged by the Redis server's clock,
 * in push.lua, never here.
 * @throws {InvalidOptionError} on a bad startBy, expiresInMs, onExpire or tags (a tag is never quoted).
 */
export function encodePushExtras(item: PushOptionsBase): string | undefined {
  const { startBy, expiresInMs, onExpire, tags } = item;
  if (startBy === undefined && expiresInMs === undefined && onExpire === undefined && tags === undefined)
    return undefined;
  let deadline = '';
  if (startBy !== undefined && expiresInMs !== undefined) {
    throw new InvalidOptionError('expiresInMs', expiresInMs, 'startBy or expiresInMs, not both');
  }
  if (startBy !== undefined) deadline = `a${toEpochMs('startBy', startBy)}`;
  if (expiresInMs !== undefined) deadline = `r${relativeDeadline('expiresInMs', expiresInMs)}`;
  if (onExpire !== undefined) assertOnExpire(onExpire, deadline !== '');
  const tagText = tags === undefined ? '' : encodeTags(tags);
  if (deadline === '' && tagText === '') return undefined;
  return `${deadline}\n${onExpire === 'drop' ? 'drop' : ''}\n${tagText}`;
}

/** `expiresInMs` (of a push or a schedule): a whole number of ms from 1 to 8.64e15. */
export function relativeDeadline(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > LIMITS.maxDateMs) {
    throw new InvalidOptionError(option, value, 'a whole number of ms from 1 to 8.64e15');
  }
  return value;
}

/** `onExpire`: 'dead-letter' or 'drop', and only beside a deadline. */
export function assertOnExpire(value: unknown, hasDeadline: boolean): void {
  if (value !== 'dead-letter' && value !== 'drop') {
    throw new InvalidOptionError('onExpire', value, "'dead-letter' or 'drop'");
  }
  if (!hasDeadline) throw new InvalidOptionError('onExpire', value, 'onExpire only beside startBy or expiresInMs');
}

/** A message's tags joined by NUL, each once, in the order given ('' for none). */
export function encodeTags(tags: unknown): string {
  if (!Array.isArray(tags)) throw new InvalidOptionError('tags', tags, 'an array of strings', true);
  if (tags.length > LIMITS.tagsPerMessage) {
    throw new InvalidOptionError('tags', tags, `at most ${LIMITS.tagsPerMessage} tags`, true);
  }
  const kept = new Set<string>();
  for (const tag of tags as unknown[]) {
    assertTag('tags', tag);
    kept.add(tag);
  }
  return [...kept].join('\0');
}

/** One tag: 1-128 bytes of UTF-8 without control characters. Never quoted in the error (user data). */
export function assertTag(option: string, tag: unknown): asserts tag is string {
  if (typeof tag !== 'string' || tag === '' || Buffer.byteLength(tag) > LIMITS.tagBytes || CONTROL.test(tag)) {
    throw new InvalidOptionError(
      option,
      tag,
      `a tag of 1-${LIMITS.tagBytes} bytes of UTF-8 without control characters`,
      true,
    );
  }
}
