import { BOUNDS, LIMITS } from '../common/redis-ack-queue.constants';
import { InvalidMessageIdError, InvalidOptionError, InvalidTopicError } from '../errors';
import { MESSAGES } from '../common/redis-ack-queue.messages';

const NAME = /^[A-Za-z0-9._:-]+$/;
/** An unpaired UTF-16 surrogate: UTF-8 cannot encode it, so it reaches Redis as U+FFFD and distinct names collide. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** A string that reaches Redis unchanged (String.prototype.isWellFormed, which ES2022 typings lack). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Topics are 1-200 characters of `A-Z a-z 0-9 . _ - :`; braces would break the hash tag. */
export function assertTopic(topic: unknown): asserts topic is string {
  if (typeof topic !== 'string' || topic.length > LIMITS.topicLength || !NAME.test(topic)) {
    throw new InvalidTopicError(topic);
  }
}

export function assertPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || prefix.length > LIMITS.nameLength || !NAME.test(prefix)) {
    throw new InvalidTopicError(prefix, MESSAGES.invalidPrefix(prefix));
  }
}

/** Queue names (of module registrations) follow the topic rule, at most 100 characters. */
export function assertQueueName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length > LIMITS.nameLength || !NAME.test(name)) {
    throw new InvalidOptionError('queue name', name, '1-100 characters of A-Z a-z 0-9 . _ - :');
  }
}

/** An object literal (or Object.create(null)): not an array, a Date or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Options objects may be left out or given as `null`: both mean "no options". */
export function optionsOf<T extends object>(options: T | null | undefined): T | Partial<T> {
  return options ?? {};
}

/** A message as reserve() returned it: an object with its topic, id and lease token. */
export function assertReserved(message: unknown): asserts message is { topic: string; id: string; token: string } {
  if (typeof message !== 'object' || message === null) {
    throw new InvalidOptionError('message', message, 'a message returned by reserve() or given to a handler', true);
  }
  const { topic, id, token } = message as Record<string, unknown>;
  assertTopic(topic);
  assertMessageId(id);
  if (typeof token !== 'string' || token === '' || !isWellFormed(token))
    throw new InvalidOptionError('token', token, 'the token of a reserved message');
}

/** An array of message ids (for dead-letter sweeps). */
export function assertIdList(ids: unknown): asserts ids is string[] {
  if (!Array.isArray(ids)) throw new InvalidOptionError('ids', ids, 'an array of message ids');
  ids.forEach((id) => assertMessageId(id));
}

/**
 * The outbox relay's receipts: `count` of them (one per message), each a string of 1-256
 * characters (a row's UUID), well formed. Said by kind, never quoted.
 */
export function assertReceipts(receipts: unknown, count: number): asserts receipts is string[] {
  if (!Array.isArray(receipts) || receipts.length !== count)
    throw new InvalidOptionError('receipts', undefined, `an array of ${count} receipts, one per message`, true);
  for (const receipt of receipts as unknown[])
    if (
      typeof receipt !== 'string' ||
      receipt.length === 0 ||
      receipt.length > LIMITS.idLength ||
      !isWellFormed(receipt)
    )
      throw new InvalidOptionError('receipts', undefined, 'receipts of 1-256 characters', true);
}

export function assertMessageId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > LIMITS.idLength || !isWellFormed(id)) {
    throw new InvalidMessageIdError(id);
  }
}

/**
 * An ordered group's name: 1-256 characters without NUL (its separator in groupWaiting) or an
 * unpaired surrogate; no priority.
 */
export function assertGroup(group: unknown, priority: number): asserts group is string {
  const valid = typeof group === 'string' && group.length > 0 && group.length <= LIMITS.idLength;
  if (!valid || group.includes('\0') || !isWellFormed(group)) {
    throw new InvalidOptionError('group', group, 'a string of 1 to 256 characters without NUL or unpaired surrogates');
  }
  if (priority !== 0)
    throw new InvalidOptionError('priority', priority, '0 for a grouped message (a group keeps push order)');
}

/** A whole number within [min, max]; `undefined` passes when the option is optional. */
export function assertInteger(option: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new InvalidOptionError(option, value, `a whole number ${range}`);
  }
}

/** A whole number within the option's range in BOUNDS; `label` names it in the error (default: the bound's name). */
export function assertBounded(bound: keyof typeof BOUNDS, value: unknown, label: string = bound): void {
  const [min, max] = BOUNDS[bound];
  assertInteger(label, value, min, max);
}

/** assertBounded, where `undefined` (an option left out) passes. */
export function assertOptionalBounded(bound: keyof typeof BOUNDS, value: unknown, label: string = bound): void {
  if (value !== undefined) assertBounded(bound, value, label);
}

export function assertOptionalInteger(option: string, value: unknown, min: number, max?: number): void {
  if (value !== undefined) assertInteger(option, value, min, max);
}

/** A finite, non-negative number of milliseconds. */
export function assertDuration(option: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(option, value, 'a finite number of milliseconds >= 0');
  }
}

/** A delay from now (ms) that ends within the Date range, so its due time can be shown and compared. */
export function assertDelay(option: string, value: unknown): asserts value is number {
  assertDuration(option, value);
  // Only a delay of thousands of years can end past it: the clock is read for those alone (push's hot path).
  if (value > LIMITS.maxDateMs / 2 && Date.now() + value > LIMITS.maxDateMs) {
    throw new InvalidOptionError(option, value, 'a delay that ends within the Date range (8.64e15 epoch ms)');
  }
}

/** `availableAt`, `startAt`, `endAt` as epoch ms: a valid Date or a number from 0 to 8.64e15 (the Date range). */
export function toEpochMs(option: string, value: Date | number): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > LIMITS.maxDateMs) {
    throw new InvalidOptionError(option, value, 'a valid Date or epoch milliseconds from 0 to 8.64e15');
  }
  return Math.ceil(ms);
}

export function assertHeaders(headers: unknown): asserts headers is Record<string, string> {
  const plain = typeof headers === 'object' && headers !== null && Object.getPrototypeOf(headers) === Object.prototype;
  if (!plain || !Object.values(headers).every((v) => typeof v === 'string')) {
    throw new InvalidOptionError('headers', headers, 'a plain object of string values');
  }
}
