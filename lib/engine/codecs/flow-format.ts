import { SealedValue } from './sealed-value';
import type { FlowChildInfo, ReservedMessage } from '../../interfaces';
import { userKeyed } from '../../common/user-keyed';
import { FLOW_CHILD } from './wire-format';

export { FLOW_HELD } from './sentinel-scores';

/**
 * A child's link to its parent as flow-parent stores it: parent topic, id and partition, its
 * onChildFailure, the root's topic, id and partition, its own delayMs and availableAt.
 */
export type StoredLink = [string, string, number, 'f' | 'c', string, string, number, number, number];

/** Where a flow's node lives. */
export interface FlowLink {
  topic: string;
  id: string;
  partition: number;
}

/** How one child of a parent stands, as the parent's HASH records it. */
export interface FlowChildRecord extends FlowChildInfo {
  partition: number;
  /** Its onChildFailure (known once it ended; 'fail' before). */
  policy: 'fail' | 'continue';
  /** The sequence of the end its parent heard (0 while pending): a later end replaces it. */
  seq: number;
}

/** A node's place in its flow as Redis has it (flow-parent and its children's HASH). */
export interface FlowRecord {
  parent: FlowLink | undefined;
  children: FlowChildRecord[];
}

/** A child's field in its parent's HASH (the same text wherever it is made). */
export function childField({ topic, id, partition }: FlowLink): string {
  return JSON.stringify([topic, id, partition]);
}

/** A child's link from its field in its parent's HASH. */
export function linkOfField(field: string): FlowLink {
  const [topic, id, partition] = JSON.parse(field) as [string, string, number];
  return { topic, id, partition };
}

/** A link as flow-parent stores it, read back. */
export function linkOf(ref: string): FlowLink {
  const link = JSON.parse(ref) as StoredLink;
  return { topic: link[0], id: link[1], partition: link[2] };
}

/** `<seq>\n<outcome>\n<parent ref>\n<payload>`: the payload may hold anything after the third line break. */
export function splitEntry(entry: string): [string, string, string, string] {
  const a = entry.indexOf('\n');
  const b = entry.indexOf('\n', a + 1);
  const c = entry.indexOf('\n', b + 1);
  return [entry.slice(0, a), entry.slice(a + 1, b), entry.slice(b + 1, c), entry.slice(c + 1)];
}

/** Why a child failed, from its outbox payload or field (`{"r":reason,"e":error}`). */
export function failureOf(payload: string): { reason: string; error?: string } {
  try {
    const { r, e } = JSON.parse(payload) as { r?: unknown; e?: unknown };
    return { reason: typeof r === 'string' ? r : 'unknown', ...(typeof e === 'string' && e !== '' && { error: e }) };
  } catch {
    return { reason: 'unknown' };
  }
}

/**
 * What a child returned, from complete.lua's extra (`{"d":ms,"r":result}`, or `"s"` sealed by a
 * codec, handed up unopened); '' for an ack without one.
 */
function resultOf(payload: string): unknown {
  if (payload === '') return undefined;
  try {
    const { r, s } = JSON.parse(payload) as { r?: unknown; s?: unknown };
    return typeof s === 'string' ? new SealedValue(s) : r;
  } catch {
    return undefined;
  }
}

/** A parent's children from its HASH as a script answers it (HGETALL in Lua: field, value, ...). */
export function decodeChildPairs(flat: string[]): FlowChildRecord[] {
  const hash = userKeyed<string>();
  for (let i = 0; i < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
  return decodeChildren(hash);
}

/** A parent's children from its HASH (see QueueKeys.flowChildren). */
export function decodeChildren(hash: Record<string, string>): FlowChildRecord[] {
  const children: FlowChildRecord[] = [];
  for (const [field, value] of Object.entries(hash)) {
    if (!field.startsWith('[')) continue;
    const { topic, id, partition } = linkOfField(field);
    if (value === 'p') {
      children.push({ topic, id, partition, outcome: 'pending', policy: 'fail', seq: 0 });
      continue;
    }
    const [, heard, kinds, payload] = /^(\d+)\n(\w\w)\n([\s\S]*)$/.exec(value) ?? ['', '0', 'af', ''];
    const policy = kinds[1] === 'c' ? 'continue' : 'fail';
    const seq = Number(heard);
    children.push(
      kinds[0] === 'a'
        ? { topic, id, partition, outcome: 'acked', policy, seq, result: resultOf(payload) }
        : { topic, id, partition, outcome: 'failed', policy, seq, failure: failureOf(payload) },
    );
  }
  return children;
}

/** Whether a message is a flow's child: its end is handed to its parent. */
export function isFlowChild(message: ReservedMessage<unknown>): boolean {
  return message.flowRole !== undefined && (message.flowRole & FLOW_CHILD) !== 0;
}
