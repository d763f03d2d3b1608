import type { EngineFilter } from '../engine/stores/message-filters';
import { InvalidOptionError } from '../errors';
import type { MessageFilter } from '../interfaces';
import { isPlainObject, isWellFormed } from './validation';

/** A tag's size as push allows it (UTF-8 bytes). */
const TAG_MAX_BYTES = 128;
/** The longest `errorContains` (characters). */
const ERROR_CONTAINS_MAX = 1_024;
/** The latest moment a Date can hold (ms). */
const LAST_DATE_MS = 8.64e15;
/** Control characters: a tag holds none (NUL joins a message's tags in Redis). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A tag as push accepts it: 1-128 UTF-8 bytes, no control character, no unpaired surrogate. */
export function isTag(tag: unknown): tag is string {
  if (typeof tag !== 'string' || tag === '' || CONTROL.test(tag) || !isWellFormed(tag)) return false;
  return Buffer.byteLength(tag) <= TAG_MAX_BYTES;
}

/** `from` or `to`: a valid Date or epoch ms (a whole number a Date can hold). */
function momentOf(option: 'from' | 'to', value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > LAST_DATE_MS) {
    throw new InvalidOptionError(option, value instanceof Date ? 'an invalid Date' : value, 'a Date or epoch ms');
  }
  return ms;
}

/**
 * The filter fields of `list`'s options or `count`'s filter, checked: typed errors, never quoting
 * a tag or a searched text (they are the user's data). Other fields are the caller's.
 * @throws {InvalidOptionError} when `filter` is not an object (null and undefined mean none), or a field is out of its range.
 */
export function filterOf(filter: unknown): EngineFilter {
  if (filter === undefined || filter === null) return {};
  if (!isPlainObject(filter))
    throw new InvalidOptionError('filter', filter, 'an object: { tag, from, to, errorContains }', true);
  const { tag, from, to, errorContains } = filter as MessageFilter;
  const checked: EngineFilter = {};
  if (tag !== undefined) {
    if (!isTag(tag))
      throw new InvalidOptionError('tag', tag, 'a string of 1-128 UTF-8 bytes without control characters', true);
    checked.tag = tag;
  }
  checked.from = momentOf('from', from);
  checked.to = momentOf('to', to);
  if (checked.from !== undefined && checked.to !== undefined && checked.from > checked.to) {
    throw new InvalidOptionError('to', to, 'a moment at or after `from`');
  }
  if (errorContains !== undefined) {
    const valid =
      typeof errorContains === 'string' && errorContains.length >= 1 && errorContains.length <= ERROR_CONTAINS_MAX;
    if (!valid || !isWellFormed(errorContains)) {
      throw new InvalidOptionError(
        'errorContains',
        errorContains,
        `a string of 1-${ERROR_CONTAINS_MAX} characters`,
        true,
      );
    }
    checked.errorContains = errorContains;
  }
  if (checked.from === undefined) delete checked.from;
  if (checked.to === undefined) delete checked.to;
  return checked;
}

/** Whether a checked filter selects anything less than the whole state. */
export function filters(filter: EngineFilter): boolean {
  return Object.keys(filter).length > 0;
}
