import type {
  DeadLetter,
  DeadLetterReason,
  FlowChildInfo,
  MessageInfo,
  MessagePreview,
  MessageState,
  RedisAckQueueKeyMode,
} from '../../interfaces';
import { MESSAGES } from '../../common/redis-ack-queue.messages';
import { userKeyed } from '../../common/user-keyed';
import type { PartitionOrder } from './merged-pages';
import { strictStringify, tokenAttempt, tryDecodeBody } from './wire-format';
import { decodeChildPairs, linkOf, type FlowChildRecord } from './flow-format';
import { FLOW_HELD, KEY_PARKED } from './sentinel-scores';
import { SealedValue } from './sealed-value';
import { isSealed } from '../../codecs/sealed-text';

/** A child as `get` shows it: without where it lives or its policy. */
function childInfo({ topic, id, outcome, result, failure }: FlowChildRecord): FlowChildInfo {
  return { topic, id, outcome, ...(outcome === 'acked' && { result }), ...(failure && { failure }) };
}

/**
 * The formats of look-up, completed records, progress and dead letters: what get.lua, list.lua
 * and dead-list.lua answer, and what complete.lua, progress.lua and bury store. A completed record replaces the body under
 * the message's id in `messages`: `{ c: completedAt, t: enqueuedAt, a: attempt, m?: maxAttempts,
 * b?: the stored body (a string), d?: durationMs, r?: result }` (complete.lua writes c, t, a, m and
 * b; the client's extra ends it).
 */

interface CompletedRecord {
  c?: number;
  /** The message's stored body, as a JSON string (records of earlier releases have none). */
  b?: string;
  t?: number;
  a?: number;
  m?: number;
  d?: number;
  r?: unknown;
  /** The result sealed by a codec, in place of `r` (see completionExtra). */
  s?: string;
}

/**
 * A dead letter's info record, as the scripts' `bury` writes it: reason, error text, last
 * attempt, time of death and (after 0.1.0) `m`, the maxAttempts that applied to its
 * deliveries; a record of an older release has no `m`.
 */
interface DeadInfo {
  r?: DeadLetterReason;
  e?: string;
  a?: number;
  m?: number;
  t?: number;
}

/** A value as JSON text within `maxBytes`, or why it cannot be stored (never quoting it). */
export function encodeStoredValue(value: unknown, maxBytes: number): { json: string } | { problem: string } {
  const encoded = value === undefined ? { problem: 'undefined' } : strictStringify(value);
  if ('problem' in encoded) return { problem: MESSAGES.valueNotJson(encoded.problem) };
  const { json } = encoded;
  const bytes = Buffer.byteLength(json);
  return bytes > maxBytes ? { problem: MESSAGES.valueTooLarge(bytes, maxBytes) } : { json };
}

/**
 * The members the client adds to a completed record (complete.lua's `extra`): duration and result,
 * as JSON (`r`) or sealed by a codec (`s`, see docs/codecs.md).
 */
export function completionExtra(
  resultJson: string | undefined,
  durationMs: number | undefined,
  sealedResult?: string,
): string {
  const members: string[] = [];
  if (durationMs !== undefined) members.push(`"d":${Math.round(durationMs * 1000) / 1000}`);
  if (resultJson !== undefined) members.push(`"r":${resultJson}`);
  if (sealedResult !== undefined) members.push(`"s":"${sealedResult}"`);
  return `{${members.join(',')}}`;
}

function parseOr(raw: string | null | false): unknown {
  if (!raw) return undefined;
  // Sealed by a codec (see docs/codecs.md): handed up unopened, for the queue to open.
  if (isSealed(raw)) return new SealedValue(raw);
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** One message from its state, stored body or record, score, attempts or token. */
function decodeInfo<T>(
  state: MessageState,
  id: string,
  raw: string | null,
  score: string | null,
  attemptsOrToken: string | null,
  defaultMaxAttempts: number,
): MessageInfo<T> {
  const body = tryDecodeBody(raw) as ReturnType<typeof tryDecodeBody> & CompletedRecord;
  const at = score === null ? undefined : Number(score);
  // A completed record keeps its message's body as the string "b" (none before this release).
  const kept = state === 'completed' && typeof body.b === 'string' ? tryDecodeBody(body.b) : {};
  const payload = sealedOr(state === 'completed' ? kept : body);
  const info: MessageInfo<T> = {
    id,
    state,
    payload: payload as T | undefined,
    headers: (state === 'completed' ? kept.h : body.h) ?? {},
    attempt: Number(attemptsOrToken ?? 0),
    maxAttempts: body.m ?? defaultMaxAttempts,
    enqueuedAt: body.t,
  };
  if (typeof body.g === 'string') info.group = body.g;
  if (state === 'leased') {
    info.attempt = attemptsOrToken ? tokenAttempt(attemptsOrToken) : 0;
    info.leaseDeadline = at;
  } else if (state === 'delayed') {
    // A flow's node held until its flow is stored, or a message waiting for its key, has no due time yet.
    if (score !== FLOW_HELD && score !== KEY_PARKED) info.dueAt = at;
  } else if (state === 'completed') {
    info.attempt = body.a ?? 0;
    info.completedAt = body.c ?? at;
    if (body.d !== undefined) info.durationMs = body.d;
    if (typeof body.s === 'string') info.result = new SealedValue(body.s);
    else if ('r' in body) info.result = body.r;
  }
  return info;
}

/**
 * A body's payload, or its sealed payload and headers (`e`) handed up unopened as a SealedValue
 * (the queue opens it, see docs/codecs.md).
 */
function sealedOr(body: ReturnType<typeof tryDecodeBody>): unknown {
  return typeof body.e === 'string' ? new SealedValue(body.e) : body.p;
}

/** A get.lua answer: see {@link decodeGetReply}. */
export type GetReply = (string | string[] | null)[];

/**
 * get.lua answers false, or `{ state, body, score, attempts, token, dead info, progress, priority,
 * steps, flow parent, children, key mode }`, steps as `{ name, result JSON, ... }`, children as
 * their HASH (field, value, ...). A progress value or step result a codec sealed is handed up as a
 * SealedValue, for the queue to open.
 */
export function decodeGetReply<T>(
  id: string,
  reply: GetReply | null,
  defaultMaxAttempts: number,
): MessageInfo<T> | null {
  if (!reply) return null;
  const [state, body, score, attempts, token, deadInfo, progress, priority] = reply as (string | null)[];
  const info = decodeInfo<T>(
    state as MessageState,
    id,
    body,
    score,
    state === 'leased' ? token : attempts,
    defaultMaxAttempts,
  );
  if (state === 'dead') addDeadInfo(info, deadInfo, score);
  if (progress) info.progress = parseOr(progress);
  if (priority) info.priority = Number(priority);
  const steps = reply[8];
  if (Array.isArray(steps) && steps.length > 0) info.steps = decodeSteps(steps);
  const parent = reply[9];
  if (typeof parent === 'string') {
    const { topic, id: parentId } = linkOf(parent);
    info.parent = { topic, id: parentId };
  }
  const childHash = reply[10];
  if (Array.isArray(childHash) && childHash.length > 0) info.children = decodeChildPairs(childHash).map(childInfo);
  addKeyMode(info, reply[11] as string | null | undefined);
  addTags(info, reply[12] as string | null | undefined);
  addDeadline(info, reply[13] as string | null | undefined);
  return info;
}

/** A message's start-by deadline and what it becomes then, from its K.deadlines value (`<ms>` or `<ms>:drop`). */
function addDeadline(info: MessageInfo<unknown>, deadline: string | null | undefined): void {
  const at = deadline ? Number.parseInt(deadline, 10) : NaN;
  if (!Number.isFinite(at)) return;
  info.startBy = at;
  info.onExpire = deadline!.endsWith(':drop') ? 'drop' : 'dead-letter';
}

/** A dead letter's death as its info record says it (see {@link DeadInfo}); `score` is its time of death in K.dead. */
function addDeadInfo(info: MessageInfo<unknown>, deadInfo: string | null, score: string | null): void {
  const dead = tryDecodeBody(deadInfo) as DeadInfo;
  info.attempt = dead.a ?? 0;
  // Recorded at death after 0.1.0; of a letter 0.1.0 buried, the body's own or the service's (0.1.x compatibility, see keys/release-0.1.ts).
  if (dead.m !== undefined) info.maxAttempts = dead.m;
  info.reason = dead.r ?? 'unknown';
  info.deadAt = dead.t ?? (score === null ? undefined : Number(score));
  info.error = dead.e ?? null;
}

/** A message's tags from its K.tags value (joined by NUL; tags hold no control character); nothing when it has none. */
function addTags(info: MessageInfo<unknown>, joined: string | null | undefined): void {
  if (joined) info.tags = joined.split('\0');
}

/** The key modes of K.keyOf's values (their first character): supersede cancelling or keeping its running one. */
const KEY_MODE_NAMES: Record<string, RedisAckQueueKeyMode> = {
  d: 'debounce',
  t: 'throttle',
  c: 'supersede',
  k: 'supersede',
};

/** A keyed message's key and mode, from its K.keyOf value (`<mode><key>`); nothing for another. */
function addKeyMode(info: MessageInfo<unknown>, keyOf: string | null | undefined): void {
  const mode = keyOf ? KEY_MODE_NAMES[keyOf[0]] : undefined;
  if (!mode) return;
  info.key = keyOf!.slice(1);
  info.mode = mode;
}

/**
 * A message's durable steps as get.lua answers them (name, result JSON, ...; '' is undefined),
 * by name: Redis keeps no order in a large hash.
 */
function decodeSteps(flat: string[]): Record<string, unknown> {
  const names: [string, unknown][] = [];
  for (let i = 0; i < flat.length; i += 2) names.push([flat[i], parseOr(flat[i + 1])]);
  names.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return userKeyed(names);
}

/** list-order.lua answers `{ size, key, ... }`; completed keys come newest first, so they are negated to ascend. */
export function decodeListOrder(reply: (number | string)[], descending: boolean): PartitionOrder {
  const sign = descending ? -1 : 1;
  return { size: Number(reply[0]), keys: reply.slice(1).map((key) => sign * Number(key)) };
}

/**
 * A row's preview as prelude-preview.lua's preview_row answers it: text or false, 1 when cut, size.
 * Of a sealed value, the sealed text's head (`~`...) and the bytes the codec wrote: the queue tells it.
 */
function decodePreview(text: unknown, cut: unknown, bytes: unknown): MessagePreview | undefined {
  return typeof text === 'string' ? { text, truncated: Number(cut) === 1, bytes: Number(bytes) } : undefined;
}

/**
 * list.lua and list-rows.lua answer `{ id, score, key mode, tags, body, attempts or token or dead
 * info, ... }`, six per message; with a preview, nine: the body without its payload (or result),
 * then text, cut and size (prelude-preview.lua's listed_rows); then, of a topic with start-by
 * deadlines, an array of each row's deadline.
 */
export function decodeListReply<T>(
  state: MessageState,
  reply: (string | number | null)[],
  defaultMaxAttempts: number,
  preview = false,
): MessageInfo<T>[] {
  const infos: MessageInfo<T>[] = [];
  const text = (i: number) => (reply[i] === null ? null : String(reply[i]));
  const last = reply[reply.length - 1] as unknown;
  const deadlines = Array.isArray(last) ? (last as (string | null)[]) : undefined;
  const rows = deadlines ? reply.length - 1 : reply.length;
  for (let i = 0; i < rows; i += preview ? 9 : 6) {
    const extra = state === 'dead' ? null : text(i + 5);
    const info = decodeInfo<T>(state, String(reply[i]), text(i + 4), text(i + 1), extra, defaultMaxAttempts);
    if (state === 'dead') addDeadInfo(info, text(i + 5), text(i + 1));
    if (preview) {
      const shown = decodePreview(reply[i + 6], reply[i + 7], reply[i + 8]);
      if (shown) info.preview = shown;
    }
    addKeyMode(info, text(i + 2));
    addTags(info, text(i + 3));
    if (deadlines) addDeadline(info, deadlines[infos.length]);
    infos.push(info);
  }
  return infos;
}

/** A dead letter as dead-list.lua answers it with a preview: the payload left out and shown cut. */
export type PreviewedDeadLetter<T> = DeadLetter<T> & { preview?: MessagePreview };

/**
 * dead-list.lua answers id, info, body per letter (with a preview: the body without its
 * payload, then text, cut and size); the info record is the JSON that the scripts' `bury`
 * writes: `{ r: reason, e: error, a: attempt, m?: maxAttempts, t: time of death }` (see {@link DeadInfo}).
 */
export function decodeDeadLetters<T>(
  topic: string,
  reply: (string | number | null)[],
  preview = false,
): PreviewedDeadLetter<T>[] {
  const letters: PreviewedDeadLetter<T>[] = [];
  const text = (i: number) => (reply[i] === null ? null : String(reply[i]));
  for (let i = 0; i < reply.length; i += preview ? 6 : 3) {
    const info = tryDecodeBody(text(i + 1)) as DeadInfo;
    const body = tryDecodeBody(text(i + 2));
    const maxAttempts = info.m ?? body.m;
    const shown = preview ? decodePreview(reply[i + 3], reply[i + 4], reply[i + 5]) : undefined;
    letters.push({
      ...(shown && { preview: shown }),
      id: String(reply[i]),
      topic,
      reason: info.r ?? 'unknown',
      error: info.e ?? null,
      attempt: info.a ?? 0,
      ...(maxAttempts !== undefined && { maxAttempts }),
      deadAt: info.t ?? 0,
      payload: sealedOr(body) as T | undefined,
      headers: body.h ?? {},
      enqueuedAt: body.t,
    });
  }
  return letters;
}
