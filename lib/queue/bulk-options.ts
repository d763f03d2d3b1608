import { InvalidOptionError } from '../errors';
import type { BulkAction, BulkFilter, BulkOptions, MessageState } from '../interfaces';
import type { BulkSelection } from '../engine/stores/bulk-store';
import { isWellFormed, toEpochMs } from './validation';

const ACTIONS: readonly BulkAction[] = ['requeue', 'cancel', 'purge', 'replay'];
const STATES: readonly MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children'];
/** The states each action may select: a requeue brings back dead letters, a purge deletes records, a replay copies ended messages. */
const ALLOWED: Record<BulkAction, readonly MessageState[]> = {
  requeue: ['dead'],
  purge: ['dead', 'completed'],
  replay: ['dead', 'completed'],
  cancel: STATES,
};
/** The default pace of a bulk action (messages per second) and its bounds. */
export const BULK_RATE = { default: 50_000, min: 1, max: 1_000_000 } as const;
const FILTER_KEYS = new Set(['state', 'tag', 'from', 'to', 'errorContains']);
const CONTROL = /\p{Cc}/u;

/**
 * `bulk`'s options, checked, as the engine takes them: the filter's state defaults to dead
 * letters. Nothing of a tag or error text is quoted in an error (user data).
 * @throws {InvalidOptionError} for an unknown action, a state the action does not take, a pace out
 * of range, or a filter of the wrong shape.
 */
export function bulkSelection(options: BulkOptions | null | undefined): BulkSelection {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with an action');
  const { action, filter, maxPerSecond = BULK_RATE.default } = options;
  if (!ACTIONS.includes(action)) throw new InvalidOptionError('action', action, `one of ${ACTIONS.join(', ')}`);
  const checked = filterOf(filter);
  const state = checked.state ?? 'dead';
  if (!STATES.includes(state)) throw new InvalidOptionError('filter.state', state, `one of ${STATES.join(', ')}`);
  if (!ALLOWED[action].includes(state))
    throw new InvalidOptionError('filter.state', state, `for ${action}: ${ALLOWED[action].join(' or ')}`);
  if (
    typeof maxPerSecond !== 'number' ||
    !Number.isInteger(maxPerSecond) ||
    maxPerSecond < BULK_RATE.min ||
    maxPerSecond > BULK_RATE.max
  )
    throw new InvalidOptionError('maxPerSecond', maxPerSecond, 'a whole number from 1 to 1000000');
  const selection: BulkSelection = { action, state, maxPerSecond };
  const { tag, from, to, errorContains } = checked;
  if (tag !== undefined) selection.tag = checkTag(tag);
  if (from !== undefined) selection.from = toEpochMs('filter.from', from);
  if (to !== undefined) selection.to = toEpochMs('filter.to', to);
  if (errorContains !== undefined) selection.errorContains = checkErrorText(errorContains);
  return selection;
}

function filterOf(filter: unknown): BulkFilter {
  if (filter === undefined || filter === null) return {};
  const plain = typeof filter === 'object' && Object.getPrototypeOf(filter) === Object.prototype;
  if (!plain || Object.keys(filter).some((key) => !FILTER_KEYS.has(key)))
    throw new InvalidOptionError('filter', filter, 'a plain object of state, tag, from, to, errorContains', true);
  return filter;
}

function checkTag(tag: unknown): string {
  const ok =
    typeof tag === 'string' &&
    tag.length > 0 &&
    Buffer.byteLength(tag) <= 128 &&
    isWellFormed(tag) &&
    !CONTROL.test(tag);
  if (!ok) throw new InvalidOptionError('filter.tag', tag, 'a tag: 1-128 UTF-8 bytes, no control characters', true);
  return tag;
}

function checkErrorText(text: unknown): string {
  if (typeof text !== 'string' || text.length === 0 || text.length > 1024 || !isWellFormed(text))
    throw new InvalidOptionError('filter.errorContains', text, 'a text of 1-1,024 characters', true);
  return text;
}
