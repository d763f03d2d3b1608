import { historyProblem, MINUTE_MS, type HistoryNames, type HistoryRequest } from '../common/history-range';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { MessageState } from '../interfaces';
import { DashboardRequestError } from './dashboard-errors';

/** A page of a list: how many to skip and how many to show. */
export interface Page {
  offset: number;
  limit: number;
}

const STATES: readonly MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children'];
/** The most rows one request reads: a page, never a whole topic of 100,000 dead letters. */
export const MAX_PAGE = 500;
const MAX_IDS = 1_000;

const refuse = (message: string) => new DashboardRequestError(400, 'BAD_REQUEST', message);

function wholeNumber(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(number) || number < min || number > max) {
    throw refuse(`${name} must be a whole number from ${min} to ${max}`);
  }
  return number;
}

/** `offset` and `limit` of a query string (limit 1 to 500, default 50). */
export function pageOf(query: Record<string, unknown>): Page {
  return {
    offset: wholeNumber('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
    limit: wholeNumber('limit', query.limit, 50, 1, MAX_PAGE),
  };
}

/** The most nodes of a flow one request answers, and how many the page asks for. */
export const MAX_FLOW_NODES = 2_000;
const FLOW_NODES = 200;

/** How many nodes of a flow to answer: `limit`, 1 to 2,000 (default 200). */
export function flowBudgetOf(query: Record<string, unknown>): number {
  return wholeNumber('limit', query.limit, FLOW_NODES, 1, MAX_FLOW_NODES);
}

export function stateOf(value: unknown): MessageState {
  if (!STATES.includes(value as MessageState)) throw refuse(`state must be one of ${STATES.join(', ')}`);
  return value as MessageState;
}

/**
 * A tag to filter messages by, from a call's query: undefined when absent or empty; the queue
 * checks the rest (a 400 that never quotes it).
 */
export function tagOf(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw refuse('tag must be given once, as text');
  return value;
}

/** A search text: at most 200 characters, empty for none. */
export function searchOf(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'string' || value.length > 200) throw refuse('search must be text of at most 200 characters');
  return value;
}

/**
 * A topic, message id or schedule name from a call's query (or older path route): one non-empty
 * text (the queue checks the rest and answers 400 for a bad one).
 */
export function nameOf(query: Record<string, unknown>, name: 'topic' | 'id' | 'schedule'): string {
  const value = query[name];
  if (typeof value !== 'string' || value === '') throw refuse(`${name} must be given once, as text`);
  return value;
}

/**
 * The dead letters an action is for, from its JSON body: `{ ids: [...] }` (1 to 1,000 ids)
 * or `{ all: true }`, never both. Undefined means all, as requeueDead and purgeDead take it.
 */
export function deadSelectionOf(body: unknown): string[] | undefined {
  const { ids, all } = (typeof body === 'object' && body !== null ? body : {}) as { ids?: unknown; all?: unknown };
  if (all === true && ids === undefined) return undefined;
  const valid = Array.isArray(ids) && ids.length >= 1 && ids.length <= MAX_IDS;
  if (all !== undefined || !valid || !ids.every((id) => typeof id === 'string')) {
    throw refuse(`give { "ids": [1 to ${MAX_IDS} ids] } or { "all": true }`);
  }
  return ids;
}

const HISTORY_NAMES: HistoryNames = { from: 'from', to: 'to', stepMs: 'stepMs', lastMs: 'lastMs' };

/** A whole number of ms from a query (undefined when absent); `problem` when it is not one. */
function millis(value: unknown, problem: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value) || !Number.isSafeInteger(number)) throw refuse(problem);
  return number;
}

/**
 * The range of a history read, from a call's query: `from` and `to` (epoch ms), or `lastMs`
 * before `to` (or now); `stepMs` (whole minutes, default one). At most 1,500 steps.
 */
export function historyOf(query: Record<string, unknown>): HistoryRequest {
  const request: HistoryRequest = {
    from: millis(query.from, MESSAGES.historyTime('from')),
    to: millis(query.to, MESSAGES.historyTime('to')),
    stepMs: millis(query.stepMs, MESSAGES.historyStep('stepMs')) ?? MINUTE_MS,
    lastMs: millis(query.lastMs, MESSAGES.historySpan('lastMs')),
  };
  const problem = historyProblem(request, HISTORY_NAMES);
  if (problem) throw refuse(problem);
  return request;
}
