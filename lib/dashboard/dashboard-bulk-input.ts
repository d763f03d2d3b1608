import { bulkProblem, bulkRequestOf, type BulkNames, type BulkRequest } from '../common/bulk-request';
import { DashboardRequestError } from './dashboard-errors';

const refuse = (message: string) => new DashboardRequestError(400, 'BAD_REQUEST', message);

const NAMES: BulkNames = {
  action: 'action',
  state: 'state',
  tag: 'tag',
  from: 'from',
  to: 'to',
  errorContains: 'errorContains',
  maxPerSecond: 'maxPerSecond',
};
const FIELDS = new Set(Object.keys(NAMES));

/** A text field: absent (undefined or empty), or one string; never quoted back (a tag is the user's data). */
function text(fields: Record<string, unknown>, name: keyof BulkNames): string | undefined {
  const value = fields[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw refuse(`${name} must be given once, as text`);
  return value;
}

/** A whole number field: a JSON number or the digits of a query; absent when undefined or empty. */
function whole(fields: Record<string, unknown>, name: keyof BulkNames, problem: string): number | undefined {
  const value = fields[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,16}$/.test(value)) return Number(value);
  throw refuse(problem);
}

/**
 * A bulk action from a call's JSON body (or, to count what it would select, its query):
 * `action`, `state` (default dead), `tag`, `from` and `to` (epoch ms), `errorContains`,
 * `maxPerSecond`; `extra` names what else the call may carry (the query's `topic`). A bad one
 * is a 400 whose text names the field, never its value.
 */
export function bulkOf(input: unknown, extra: readonly string[] = []): BulkRequest {
  const fields = (typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {}) as Record<
    string,
    unknown
  >;
  if (Object.keys(fields).some((key) => !FIELDS.has(key) && !extra.includes(key))) {
    throw refuse(`a bulk action takes only ${[...FIELDS].join(', ')}`);
  }
  const parsed = {
    action: text(fields, 'action') ?? '',
    state: text(fields, 'state'),
    tag: text(fields, 'tag'),
    from: whole(fields, 'from', 'from must be a time in epoch ms'),
    to: whole(fields, 'to', 'to must be a time in epoch ms'),
    errorContains: text(fields, 'errorContains'),
    maxPerSecond: whole(fields, 'maxPerSecond', 'maxPerSecond must be a whole number from 1 to 1,000,000'),
  };
  const problem = bulkProblem(parsed, NAMES);
  if (problem) throw refuse(problem);
  return bulkRequestOf(parsed);
}
