import { InvalidPayloadError, PayloadTooLargeError } from '../../errors';
import type { PushOptions, RedisAckQueueOnExpire, ReservedMessage } from '../../interfaces';
import { MESSAGES } from '../../common/redis-ack-queue.messages';

/**
 * The formats of the hot path: stored bodies, lease tokens and reserve replies (lookup-format.ts
 * has those of look-up, records and dead letters). The Lua side of each format is named next to it.
 */

/** One message for push.lua (see {@link pushArguments}). */
export interface EncodedPush {
  id: string;
  /**
   * The stored body without its enqueue time: JSON without its opening brace (push.lua puts
   * `{"t":<enqueuedAt>,` before it), or compact `|<payload>` (it puts the time in base 36 before it).
   */
  body: string;
  /** Its ordered group: on a partitioned topic, the group (not the id) chooses the partition. */
  group?: string;
  /**
   * push.lua's long form: delay (ms), earliest due time (epoch ms, 0 for none), priority (0-9)
   * and group ('' for none). Absent for a message ready now at priority 0 without a group.
   */
  options?: [delayMs: number, availableAt: number, priority: number, group: string];
  /**
   * push.lua's flow form (a node of pushFlow, with `options`): its parent's reference ('' for the
   * root) and, for a parent, its `<delayMs> <availableAt>` and a line per child field.
   */
  flow?: [parent: string, children: string];
  /** Its key mode (push-keyed.lua, with `options`): on a partitioned topic, the key chooses the partition. */
  keyed?: KeyedPush;
  /**
   * Its start-by deadline and tags, as prelude-extras.lua reads them (with `options`):
   * `<deadline>\n<onExpire>\n<tags joined by NUL>`; absent when it has neither.
   */
  extras?: string;
  /** Its payload and headers, until a codec seals them into `body` (see sealedPushBody); '' is its body meanwhile. */
  sealable?: SealableBody;
  /**
   * Its relay receipt (the outbox relay's, a row's UUID): recorded with the push, in the same
   * script call, which refuses it when the receipt is held already (see prelude-receipts.lua).
   */
  receipt?: string;
}

/**
 * A push's key mode as push-keyed.lua takes it: `d` debounce (its `delayMs`, and maxWaitMs or ''
 * in `extra`), `t` throttle (windowMs in `extra`), `c` or `k` supersede cancelling or keeping
 * the key's running message.
 */
export interface KeyedPush {
  mode: 'd' | 't' | 'c' | 'k';
  key: string;
  delayMs?: number;
  extra?: number | '';
}

/**
 * push-keyed.lua's codes per message: stored, duplicate (a throttled key's window held), debounced,
 * superseded, relayed before (its relay receipt is held: nothing done).
 */
export const KEYED_STORED = 1;
export const KEYED_DUPLICATE = 0;
export const KEYED_DEBOUNCED = 4;
export const KEYED_SUPERSEDED = 5;
export const KEYED_RELAYED = 6;

/** push.lua's code of a message relayed before (its relay receipt is held: nothing done). */
export const PUSH_RELAYED = 4;

/** What push-keyed.lua answers per message: its code, the id it names, a message it cancelled ('' for none). */
export interface KeyedReply {
  code: number;
  id: string;
  cancelled: string;
}

/**
 * push-keyed.lua's ARGV: nine per message, see its header; with relay receipts (any item has
 * one), 'r' first and one receipt per message ('' for none) last.
 */
export function keyedPushArguments(items: EncodedPush[]): (string | number)[] {
  const receipts = items.some(({ receipt }) => receipt !== undefined);
  const args: (string | number)[] = receipts ? ['r'] : [];
  for (const { id, body, options, keyed, extras = '' } of items) {
    const [delayMs, availableAt, priority] = options ?? [0, 0, 0];
    const { mode, key, extra = '' } = keyed!;
    args.push(mode, key, id, body, mode === 'd' ? keyed!.delayMs! : delayMs, availableAt, priority, extra, extras);
  }
  if (receipts) for (const { receipt = '' } of items) args.push(receipt);
  return args;
}

/** push-keyed.lua's reply (three items per message, then the woken flag), as one KeyedReply per message. */
export function decodeKeyedReplies(reply: (string | number)[]): KeyedReply[] {
  const replies: KeyedReply[] = [];
  for (let i = 0; i + 2 < reply.length; i += 3)
    replies.push({ code: Number(reply[i]), id: String(reply[i + 1]), cancelled: String(reply[i + 2]) });
  return replies;
}

/**
 * push.lua's ARGV for some messages: whether the prefix's stored format is compact ('1': no older
 * release runs, so grouped messages wait in their groups' ZSETs), a shape, then id and body per
 * message, followed by its four options in the long form. The shape is '' when no message has
 * options (the common case costs one item), else one character per message: 's' short form, 'l'
 * long form, 'f' flow form, 'x' and 'y' the long and flow forms followed by their extras. With
 * relay receipts (any item has one), the first item says so ('1r', '0r') and one receipt per
 * message ('' for none) ends the list: a push without them costs nothing more.
 */
export function pushArguments(items: EncodedPush[], compact: boolean): (string | number)[] {
  const args: (string | number)[] = [compact ? '1' : '0', ''];
  let shapes = '';
  let long = false;
  let receipts = false;
  for (const { id, body, options, flow, extras, receipt } of items) {
    if (receipt !== undefined) receipts = true;
    args.push(id, body);
    if (options) {
      args.push(...options);
      long = true;
    }
    if (flow) args.push(...flow);
    if (extras) args.push(extras);
    shapes += flow ? (extras ? 'y' : 'f') : !options ? 's' : extras ? 'x' : 'l';
  }
  if (long) args[1] = shapes;
  if (receipts) {
    args[0] += 'r';
    for (const { receipt = '' } of items) args.push(receipt);
  }
  return args;
}

/**
 * A stored body, in one of two forms. JSON: one compact object, `p` payload, `h` headers, `g`
 * group, `m` maxAttempts, and `t` enqueuedAt, which push.lua puts first from the server clock
 * (reserve.lua reads `m` from the end of the text without decoding it). Compact, for a message
 * without headers, group or maxAttempts: `<enqueuedAt in base 36>|<payload JSON>`.
 */
interface StoredBody {
  p: unknown;
  h?: Record<string, string>;
  /** The payload and headers sealed by a codec (in place of `p` and `h`, see sealedPushBody). */
  e?: string;
  g?: string;
  /** Its place in a flow (FLOW_CHILD, FLOW_PARENT or both); absent outside flows. */
  f?: number;
  m?: number;
  t: number;
}

/** A flow node with a parent: its end is handed to the parent (the body's `f` bits). */
export const FLOW_CHILD = 1;
/** A flow node with children: its handler reads their results. */
export const FLOW_PARENT = 2;

/** A lease as the scripts know it: the message id and its token. */
export interface Lease {
  id: string;
  token: string;
  /** Its ordered group: on a partitioned topic, the group (not the id) chose the partition. */
  group?: string;
}

/**
 * Serializes a payload, refusing anything JSON would silently change or drop; its headers count
 * toward `maxBytes` with it.
 */
export function encodeBody(
  topic: string,
  payload: unknown,
  options: PushOptions,
  maxBytes: number,
  flowRole = 0,
): string {
  const { json, tail } = encodeSealableBody(topic, payload, options, maxBytes, flowRole);
  return json.slice(0, -1) + tail;
}

/** The members after payload and headers, and the closing brace: `g`, `f`, then `m` (which reserve.lua reads from the end). */
export function bodyTail({ group, maxAttempts }: PushOptions, flowRole: number): string {
  let tail = '';
  if (group !== undefined) tail += `,"g":${JSON.stringify(group)}`;
  if (flowRole !== 0) tail += `,"f":${flowRole}`;
  if (maxAttempts !== undefined) tail += `,"m":${maxAttempts}`;
  return `${tail}}`;
}

/**
 * A body whose payload and headers a codec will seal (see docs/codecs.md): their JSON text, checked
 * as encodeBody checks it, and the members that stay readable after them.
 */
export interface SealableBody {
  /** `{"p":<payload>[,"h":{...}]}`: what the codec encodes. */
  json: string;
  /** The readable members after it and the closing brace (see bodyTail). */
  tail: string;
}

/** The sealable parts of a body (see {@link SealableBody}). */
export function encodeSealableBody(
  topic: string,
  payload: unknown,
  options: PushOptions,
  maxBytes: number,
  flowRole = 0,
): SealableBody {
  const headers = options.headers && Object.keys(options.headers).length > 0 ? JSON.stringify(options.headers) : '';
  let json = `{"p":${encodePayload(topic, payload, headers, maxBytes)}`;
  if (headers !== '') json += `,"h":${headers}`;
  return { json: `${json}}`, tail: bodyTail(options, flowRole) };
}

/**
 * A sealed body as push.lua takes it (the JSON form without its opening brace): `e`, the sealed
 * text (base64 after a `~`, nothing to escape), in place of `p` and `h`.
 */
export function sealedPushBody(sealed: string, tail: string): string {
  return `"e":"${sealed}"${tail}`;
}

/**
 * A body as push.lua takes it, which puts the enqueue time in front: the compact form's
 * `|<payload>` when `compact` and the message has no headers, group or maxAttempts, else the
 * JSON form without its opening brace.
 */
export function encodePushBody(
  topic: string,
  payload: unknown,
  options: PushOptions,
  maxBytes: number,
  compact: boolean,
  flowRole = 0,
): string {
  const { headers, group, maxAttempts } = options;
  const plain =
    group === undefined &&
    maxAttempts === undefined &&
    flowRole === 0 &&
    (!headers || Object.keys(headers).length === 0);
  if (compact && plain) return `|${encodePayload(topic, payload, '', maxBytes)}`;
  return encodeBody(topic, payload, options, maxBytes, flowRole).slice(1);
}

/** The payload's JSON text, checked: defined, JSON as it is, within `maxBytes` with the headers' text. */
function encodePayload(topic: string, payload: unknown, headers: string, maxBytes: number): string {
  if (payload === undefined) throw new InvalidPayloadError(topic, MESSAGES.payloadUndefined(topic));
  const encoded = strictStringify(payload);
  if ('problem' in encoded)
    throw new InvalidPayloadError(topic, MESSAGES.payloadNotSerializable(topic, encoded.problem));
  const bytes = Buffer.byteLength(encoded.json) + (headers === '' ? 0 : Buffer.byteLength(headers));
  if (bytes > maxBytes) throw new PayloadTooLargeError(topic, bytes, maxBytes);
  return encoded.json;
}

/** A value JSON would drop, change or refuse, and the object that holds it (to say where, not what). */
class NotJson extends Error {
  constructor(
    readonly what: string,
    readonly holder: unknown,
  ) {
    super(what);
  }
}

/**
 * JSON text of a value (not undefined itself), or what JSON would drop, change or refuse in it,
 * said by kind and depth: never a key or a value, which are user data.
 */
export function strictStringify(value: unknown): { json: string } | { problem: string } {
  try {
    // Most payloads are plain: JSON.stringify without a replacer runs several times faster.
    if (plainJson(value, 0)) return { json: JSON.stringify(value) };
  } catch {
    // A getter threw: the strict path below says so.
  }
  try {
    // undefined when a toJSON method answers it.
    const json = JSON.stringify(value, strictJson) as string | undefined;
    return json === undefined ? { problem: 'undefined' } : { json };
  } catch (error) {
    if (error instanceof NotJson) return { problem: `${error.what}${whereIn(value, error.holder)}` };
    // JSON.stringify's own message names the keys of a cycle: only its kind is said.
    const cycle = error instanceof TypeError && /circular/i.test(error.message);
    return { problem: cycle ? 'a circular reference' : 'a toJSON method or getter threw' };
  }
}

/** How deep plainJson looks; anything deeper (a cycle too) takes the strict path. */
const PLAIN_DEPTH = 32;

/**
 * True when JSON.stringify keeps `value` as it is: strings, booleans, finite numbers, null, and
 * arrays and objects of them, without toJSON, Map or Set, at most PLAIN_DEPTH deep. False decides
 * nothing: the strict replacer then finds what is wrong, if anything (a Date, say, is fine).
 */
function plainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= PLAIN_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!plainJson(value[i], depth + 1)) return false;
        return true;
      }
      const object = value as Record<string, unknown>;
      if (typeof object.toJSON === 'function' || value instanceof Map || value instanceof Set) return false;
      for (const key in object) if (!plainJson(object[key], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

/** A JSON.stringify replacer that refuses what JSON would silently change or drop. */
function strictJson(this: unknown, key: string, value: unknown): unknown {
  switch (typeof value) {
    case 'undefined':
      // JSON drops it from an object and makes it null in an array. (The root is checked by the caller.)
      if (key !== '') throw new NotJson('undefined', this);
      return value;
    case 'function':
    case 'symbol':
      throw new NotJson(`a ${typeof value}`, this);
    case 'bigint':
      throw new NotJson('a BigInt', this);
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(`a number that is ${value}`, this);
      return value;
    case 'object':
      if (value instanceof Map || value instanceof Set)
        throw new NotJson(value instanceof Map ? 'a Map' : 'a Set', this);
      return value;
    default:
      return value;
  }
}

/** Where the refused value sits: ' at depth n' below the root (found again only on this error path). */
function whereIn(root: unknown, holder: unknown): string {
  const seen = new Set<unknown>();
  let level: unknown[] = [root];
  for (let depth = 1; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const node of level) {
      if (node === holder) return ` at depth ${depth}`;
      if (typeof node !== 'object' || node === null || seen.has(node)) continue;
      seen.add(node);
      next.push(...(Object.values(node) as unknown[]));
    }
    level = next;
  }
  return ': the whole value';
}

/** The delivery a token belongs to: tokens are `<sequence>.<attempt>` (made by reserve.lua). */
export function tokenAttempt(token: string): number {
  return Number(token.slice(token.indexOf('.') + 1));
}

/** The enqueue time of a compact body, in base 36 (what push.lua writes). */
const COMPACT_TIME = /^[0-9a-z]+$/;

/** A stored body of either form (see {@link StoredBody}); throws when it is neither. */
export function parseStoredBody(raw: string): StoredBody {
  const bar = raw.charCodeAt(0) === 123 ? -1 : raw.indexOf('|');
  const time = bar > 0 ? raw.slice(0, bar) : '';
  if (!COMPACT_TIME.test(time)) return JSON.parse(raw) as StoredBody;
  const t = parseInt(time, 36);
  // A preview row's body comes without its payload.
  return bar === raw.length - 1 ? { t, p: undefined } : { t, p: JSON.parse(raw.slice(bar + 1)) as unknown };
}

/** Turns one leased body back into a message; throws when it is not a stored body. */
export function decodeReserved<T>(
  topic: string,
  id: string,
  raw: string,
  attempt: number,
  token: string,
  leaseDeadline: number,
  defaultMaxAttempts: number,
  dueAt?: number,
): ReservedMessage<T> {
  const body = parseStoredBody(raw);
  return {
    id,
    topic,
    payload: body.p as T,
    headers: body.h ?? {},
    attempt,
    maxAttempts: body.m ?? defaultMaxAttempts,
    enqueuedAt: body.t,
    ...(body.g !== undefined && { group: body.g }),
    ...(body.f !== undefined && { flowRole: body.f }),
    ...(typeof body.e === 'string' && { sealed: body.e }),
    token,
    leaseDeadline,
    ...(dueAt !== undefined && { dueAt }),
  };
}

/** reserve.lua's nextDueInMs for a paused topic. */
const PAUSED_DUE = -2;

/** A reserve.lua reply, decoded. */
export interface ReserveReply<T> {
  /** The Redis server's clock when the script ran (ms). */
  serverNow: number;
  /** Ms until something becomes ready without a push; -1 when nothing is scheduled (or paused). */
  nextDueInMs: number;
  /** The topic (partition) is paused: nothing was leased. */
  paused: boolean;
  /** A rate limit (rateLimit or groupRateLimit) is set: the messages leased count as started now. */
  rateLimited: boolean;
  /** A flow of this slot needs the sweep: a process seems to have died mid-way (see FlowTrees.sweep). */
  flowRepair: boolean;
  /** One ack.lua flag per lease acked in the same call (1 acked, 0 stale, 2 already gone). */
  ackFlags: number[];
  messages: ReservedMessage<T>[];
  /** Leased bodies that Redis' cjson took but JSON.parse refuses (NaN, hex numbers...). */
  unreadable: (Lease & { attempt: number })[];
  /** Messages the script itself sent to the dead letters (last lease expired, or malformed). */
  deadInRedis: number;
  /** The outbox entries the script wrote (child id, entry, ...: flow children acked or dead), to pass on. */
  flowEnded: string[];
  /** The flow parents it leased, each with its children's HASH (id, HGETALL's answer, ...). */
  flowParents: (string | string[])[];
  /** Messages whose start-by deadline passed, ended by this reserve as their `onExpire` said. */
  expired: ExpiredMessage[];
}

/** A message a reserve ended because its start-by deadline passed before it started. */
export interface ExpiredMessage {
  /** The message's id. */
  id: string;
  /** How it ended: a dead letter (reason `expired`) or dropped. */
  onExpire: RedisAckQueueOnExpire;
}

/** reserve.lua's list of expired messages (id, 'd' dead-lettered or 'x' dropped, ...). */
function decodeExpired(raw: unknown): ExpiredMessage[] {
  if (!Array.isArray(raw)) return [];
  const expired: ExpiredMessage[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    expired.push({ id: String(raw[i]), onExpire: raw[i + 1] === 'x' ? 'drop' : 'dead-letter' });
  }
  return expired;
}

/**
 * reserve.lua answers `{ now, nextDueInMs (-2: paused), deadline, flags (1 rate limited, 2 flow repair), n,
 * n ack flags, dead (absent from an idle answer), then per message its id and '<token> <body>', or '<token> <due> <body>' for a
 * retry (a JSON body never starts with a digit; a compact one has a '|' before any space), then (not in an idle answer)
 * three arrays: the outbox entries written, the flow parents leased with their children, and the messages
 * whose start-by deadline passed (id, 'd' or 'x', ...) }`.
 */
export function decodeReserveReply<T>(
  topic: string,
  reply: readonly unknown[],
  defaultMaxAttempts: number,
): ReserveReply<T> {
  const deadline = Number(reply[2]);
  const ackCount = Number(reply[4]);
  const ackFlags = new Array<number>(ackCount);
  for (let i = 0; i < ackCount; i++) ackFlags[i] = Number(reply[5 + i]);
  const messages: ReservedMessage<T>[] = [];
  const unreadable: ReserveReply<T>['unreadable'] = [];
  const deadInRedis = Number(reply[5 + ackCount] ?? 0);
  // The three arrays last: an answer without them (idle) ends with a message or the counts.
  const flows = Array.isArray(reply[reply.length - 1]);
  const end = flows ? reply.length - 3 : reply.length;
  for (let i = 6 + ackCount; i < end; i += 2) {
    const id = String(reply[i]);
    const leased = String(reply[i + 1]);
    const space = leased.indexOf(' ');
    const token = leased.slice(0, space);
    const attempt = tokenAttempt(token);
    let rest = space + 1;
    let dueAt: number | undefined;
    // A due time is digits and a space; a compact body may start with digits too, then a '|'.
    if (leased.charCodeAt(rest) >= 48 && leased.charCodeAt(rest) <= 57) {
      const next = leased.indexOf(' ', rest);
      const bar = leased.indexOf('|', rest);
      if (next !== -1 && (bar === -1 || next < bar)) {
        dueAt = Number(leased.slice(rest, next));
        rest = next + 1;
      }
    }
    try {
      messages.push(
        decodeReserved<T>(topic, id, leased.slice(rest), attempt, token, deadline, defaultMaxAttempts, dueAt),
      );
    } catch {
      unreadable.push({ id, token, attempt });
    }
  }
  const nextDueInMs = Number(reply[1]);
  const paused = nextDueInMs === PAUSED_DUE;
  return {
    serverNow: Number(reply[0]),
    nextDueInMs: paused ? -1 : nextDueInMs,
    paused,
    rateLimited: (Number(reply[3]) & 1) === 1,
    flowRepair: (Number(reply[3]) & 2) === 2,
    ackFlags,
    messages,
    unreadable,
    deadInRedis,
    flowEnded: flows ? (reply[end] as string[]) : [],
    flowParents: flows ? (reply[end + 1] as (string | string[])[]) : [],
    expired: flows ? decodeExpired(reply[end + 2]) : [],
  };
}

/** Reads a stored body that may be damaged (dead letters); never throws. */
export function tryDecodeBody(raw: string | null): Partial<StoredBody> {
  if (raw === null) return {};
  try {
    const body = parseStoredBody(raw) as unknown;
    return typeof body === 'object' && body !== null ? body : {};
  } catch {
    return {};
  }
}
