import type { EngineFilter } from '../engine/stores/message-filters';
import { InvalidOptionError } from '../errors';
import type { MessageFilter } from '../interfaces';
import { assertTag } from './push-extras';
import { isPlainObject, isWellFormed, toEpochMs } from './validation';

/** The longest `errorContains` (characters). */
const ERROR_CONTAINS_MAX = 1_024;

/** `from` (rounded up) or `to` (rounded down): a valid Date or epoch ms, as push takes `startBy`. */
function momentOf(option: 'from' | 'to', value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = toEpochMs(option, value as Date | number);
  return option === 'to' && typeof value === 'number' ? Math.floor(value) : ms;
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
    assertTag('tag', tag);
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
