import type { BulkAction, BulkFilter, MessageFilter, MessageState, RedisAckQueueBulkApi } from '../interfaces';
import { MESSAGES } from './redis-ack-queue.messages';

/** Every bulk action, in the order the tools offer them. */
export const BULK_ACTIONS: readonly BulkAction[] = ['requeue', 'cancel', 'purge', 'replay'];

const ALL_STATES: readonly MessageState[] = ['ready', 'delayed', 'leased', 'waiting-children', 'dead', 'completed'];

/** The states each action may select (docs/bulk.md): the service refuses the others too, after a round trip. */
export const BULK_STATES: Readonly<Record<BulkAction, readonly MessageState[]>> = {
  requeue: ['dead'],
  cancel: ALL_STATES,
  purge: ['dead', 'completed'],
  replay: ['dead', 'completed'],
};

/** The most bytes of a tag (as push takes them). */
const TAG_BYTES = 128;
const ERROR_TEXT_CHARS = 1_024;
const MAX_RATE = 1_000_000;

/** A bulk action as an operator tool takes it, once parsed: the service's `bulk` options, `state` set. */
export interface BulkRequest {
  /** What to do. */
  action: BulkAction;
  /** Which messages (`state` defaulted to `dead`). */
  filter: BulkFilter & { state: MessageState };
  /** The pace, when given. */
  maxPerSecond?: number;
}

/** The names the caller gives each field, for its texts (`errorContains` on the API, `--error-contains` on the CLI). */
export type BulkNames = Record<'action' | 'state' | 'tag' | 'from' | 'to' | 'errorContains' | 'maxPerSecond', string>;

/** The fields of a bulk action as parsed by a tool, not yet checked: action and state may be any text. */
export interface BulkFields {
  action: string;
  state?: string;
  tag?: string;
  from?: number;
  to?: number;
  errorContains?: string;
  maxPerSecond?: number;
}

const isTime = (ms: number | undefined) => ms === undefined || (Number.isSafeInteger(ms) && ms >= 0);

/** Why the fields are not a bulk action (a text of MESSAGES that never quotes a value), or undefined. */
export function bulkProblem(fields: BulkFields, names: BulkNames): string | undefined {
  const { action, state = 'dead', tag, from, to, errorContains, maxPerSecond } = fields;
  if (!BULK_ACTIONS.includes(action as BulkAction)) return MESSAGES.bulkAction(names.action, BULK_ACTIONS);
  const states = BULK_STATES[action as BulkAction];
  if (!states.includes(state as MessageState)) return MESSAGES.bulkState(names.state, action, states);
  if (tag !== undefined && !isTag(tag)) return MESSAGES.bulkTag(names.tag);
  if (!isTime(from)) return MESSAGES.historyTime(names.from);
  if (!isTime(to)) return MESSAGES.historyTime(names.to);
  if (from !== undefined && to !== undefined && from > to) return MESSAGES.historyOrder(names.from, names.to);
  if (errorContains !== undefined && (errorContains.length < 1 || errorContains.length > ERROR_TEXT_CHARS)) {
    return MESSAGES.bulkErrorContains(names.errorContains);
  }
  if (maxPerSecond !== undefined && (!Number.isInteger(maxPerSecond) || maxPerSecond < 1 || maxPerSecond > MAX_RATE)) {
    return MESSAGES.bulkRate(names.maxPerSecond);
  }
  return undefined;
}

/** The checked fields as the service's options (call bulkProblem first). */
export function bulkRequestOf(fields: BulkFields): BulkRequest {
  const { action, state = 'dead', tag, from, to, errorContains, maxPerSecond } = fields;
  const filter: BulkRequest['filter'] = { state: state as MessageState };
  if (tag !== undefined) filter.tag = tag;
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to;
  if (errorContains !== undefined) filter.errorContains = errorContains;
  return { action: action as BulkAction, filter, ...(maxPerSecond === undefined ? {} : { maxPerSecond }) };
}

/** A tag as push takes one: 1-128 UTF-8 bytes, no control characters. */
function isTag(tag: string): boolean {
  const bytes = Buffer.byteLength(tag, 'utf8');
  return bytes >= 1 && bytes <= TAG_BYTES && !/\p{Cc}/u.test(tag);
}

/** What counts and runs bulk actions: the queue service's `count` and bulk calls. */
export interface BulkRunner extends RedisAckQueueBulkApi {
  count(topic: string, state: MessageState, filter?: MessageFilter): Promise<number>;
}
