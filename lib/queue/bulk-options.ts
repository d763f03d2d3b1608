import { BULK_ACTIONS, BULK_STATES } from '../common/bulk-request';
import { InvalidOptionError } from '../errors';
import type { BulkFilter, BulkOptions } from '../interfaces';
import type { BulkSelection } from '../engine/stores/bulk-store';
import { filterOf as messageFilterOf } from './message-filter';
import { isPlainObject } from './validation';

const STATES = BULK_STATES.cancel;
/** The default pace of a bulk action (messages per second) and its bounds. */
export const BULK_RATE = { default: 50_000, min: 1, max: 1_000_000 } as const;
const FILTER_KEYS = new Set(['state', 'tag', 'from', 'to', 'errorContains']);

/**
 * `bulk`'s options, checked, as the engine takes them: the filter's state defaults to dead
 * letters; the rest of the filter is checked as `list` checks it. Nothing of a tag or error text
 * is quoted in an error (user data).
 * @throws {InvalidOptionError} for an unknown action, a state the action does not take, a pace out
 * of range, or a filter of the wrong shape.
 */
export function bulkSelection(options: BulkOptions | null | undefined): BulkSelection {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with an action');
  const { action, filter, maxPerSecond } = options;
  if (!BULK_ACTIONS.includes(action))
    throw new InvalidOptionError('action', action, `one of ${BULK_ACTIONS.join(', ')}`);
  const { state = 'dead', ...rest } = filterOf(filter);
  if (!STATES.includes(state)) throw new InvalidOptionError('filter.state', state, `one of ${STATES.join(', ')}`);
  if (!BULK_STATES[action].includes(state))
    throw new InvalidOptionError('filter.state', state, `for ${action}: ${BULK_STATES[action].join(' or ')}`);
  return { action, state: state, maxPerSecond: bulkRate(maxPerSecond), ...messageFilterOf(rest) };
}

/**
 * A bulk action's pace, checked.
 * @throws {InvalidOptionError} when it is not a whole number from 1 to 1,000,000.
 */
export function bulkRate(maxPerSecond: unknown = BULK_RATE.default): number {
  if (
    typeof maxPerSecond !== 'number' ||
    !Number.isInteger(maxPerSecond) ||
    maxPerSecond < BULK_RATE.min ||
    maxPerSecond > BULK_RATE.max
  )
    throw new InvalidOptionError('maxPerSecond', maxPerSecond, 'a whole number from 1 to 1000000');
  return maxPerSecond;
}

function filterOf(filter: unknown): BulkFilter {
  if (filter === undefined || filter === null) return {};
  if (!isPlainObject(filter) || Object.keys(filter).some((key) => !FILTER_KEYS.has(key)))
    throw new InvalidOptionError('filter', filter, 'a plain object of state, tag, from, to, errorContains', true);
  return filter;
}
