import { randomUUID } from 'node:crypto';
import { InvalidOptionError } from '../errors';
import type { Flow, OutboxFlowResult, PushManyItem } from '../interfaces';
import { planFlow } from '../queue/flow-plan';
import { encodePushItem } from '../queue/push-items';
import { assertTopic } from '../queue/validation';

/** The columns one outbox row is written with (the table's defaults fill the rest). */
export interface OutboxRowValues {
  kind: 'push' | 'flow';
  topic: string;
  /** The message's id, '' for a push with a key mode (its id is decided at its push). */
  messageId: string;
  /** The payload's JSON; for a flow, the whole tree's JSON. */
  payload: string;
  /** The push options' JSON, or null for none. */
  options: string | null;
}

/** A row as the relay reads it back. */
export interface OutboxRow extends OutboxRowValues {
  /** The row's id (a bigint, as text). */
  rowId: string;
  /** The receipt Redis keeps with its push. */
  receipt: string;
  /** When it was inserted (epoch ms, the database's clock). */
  createdAt: number;
}

/** What a row asks the relay to do: push one item, or push a flow. */
export type OutboxWork = { kind: 'push'; topic: string; item: PushManyItem } | { kind: 'flow'; flow: Flow };

// Options kept as epoch ms in the row: JSON has no Date.
const DATE_OPTIONS = ['availableAt', 'startBy'] as const;

/**
 * Checks one push item as `push` would (throws its typed error) and turns it into a row: its id
 * given or a new UUID (none for a key mode), its payload and options as JSON.
 */
export function pushRow(topic: string, item: PushManyItem, maxPayloadBytes: number): OutboxRowValues {
  assertTopic(topic);
  // The same checks, in the same order, as a push of it: the relay's push must not refuse it later.
  const encoded = encodePushItem(topic, item, maxPayloadBytes, false);
  const { payload, id, ...options } = item;
  const messageId = encoded.keyed ? '' : (id ?? randomUUID());
  for (const name of DATE_OPTIONS) {
    const value = options[name];
    if (value instanceof Date) (options as Record<string, unknown>)[name] = value.getTime();
  }
  const json = Object.keys(options).length === 0 ? null : JSON.stringify(options);
  return { kind: 'push', topic, messageId, payload: JSON.stringify(payload), options: json };
}

/**
 * Checks a flow as `pushFlow` would and turns it into one row: every node without an id given a
 * new UUID (so a relay's second try pushes the same ids), the tree as JSON.
 */
export function flowRow(flow: Flow, maxPayloadBytes: number): { row: OutboxRowValues; result: OutboxFlowResult } {
  const named = withIds(flow);
  planFlow(named, maxPayloadBytes, false);
  const row: OutboxRowValues = {
    kind: 'flow',
    topic: named.topic,
    messageId: named.id!,
    payload: JSON.stringify(named),
    options: null,
  };
  return { row, result: idsOf(named) };
}

/** A copy of the tree with every node's id set; a non-tree is returned as is, for planFlow to refuse. */
function withIds(node: Flow): Flow {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const children = Array.isArray(node.children) ? node.children.map(withIds) : node.children;
  return { ...node, id: node.id ?? randomUUID(), ...(children === undefined ? {} : { children }) };
}

function idsOf(node: Flow): OutboxFlowResult {
  return { topic: node.topic, id: node.id!, children: (node.children ?? []).map(idsOf) };
}

/**
 * What a row read back asks for. Throws InvalidOptionError for a row no release could have written
 * (an unknown kind, JSON that does not parse): the relay marks it dead.
 */
export function workOf(row: OutboxRow): OutboxWork {
  if (row.kind === 'flow') return { kind: 'flow', flow: parseJson(row.payload, 'payload') as Flow };
  if (row.kind !== 'push') throw new InvalidOptionError('kind', row.kind, "'push' or 'flow'");
  const options = row.options === null ? {} : parseJson(row.options, 'options');
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError('options', undefined, 'a JSON object of push options', true);
  }
  const item = { ...options, payload: parseJson(row.payload, 'payload') } as PushManyItem;
  if (row.messageId !== '') item.id = row.messageId;
  return { kind: 'push', topic: row.topic, item };
}

function parseJson(text: string, column: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidOptionError(column, undefined, 'JSON', true);
  }
}
