import { MESSAGES } from '../common/redis-ack-queue.messages';
import { asError } from '../errors/error-text';

/**
 * How a request carries its way back, and how its reply is stored: headers of the request
 * message, and the reply's JSON text (reply.lua stores it as it is).
 */

/** The request header naming the caller's channel (`<prefix>:reply-to:<uuid>`). */
export const REPLY_TO_HEADER = 'ackq-reply-to';
/**
 * The request header by which a caller asks for its reply whole on its channel's inline twin
 * (`'1'`), rather than its id to take it by: one round trip fewer. A server older than this
 * header sends the id, and the caller takes the reply as before.
 */
export const REPLY_INLINE_HEADER = 'ackq-reply-inline';
/** The request header giving how long (ms) the caller waits: how long its reply is kept. */
export const REPLY_TTL_HEADER = 'ackq-reply-ttl-ms';
/** How long a caller waits when its `timeoutMs` is left out, and a request without that header's reply is kept. */
export const DEFAULT_REPLY_WAIT_MS = 30_000;

/**
 * What a handler answered: its values in order (then completion), or the error its exception
 * filters made; or, from a server with a `serializer`, what it made of Nest's response packets.
 */
export type ReplyRecord = { values: unknown[] } | { error: unknown } | { packets: unknown[] };

/** A reply's JSON: `{"v":[...]}` (with `"u"`, the positions of undefined values), `{"e":...}` or `{"p":[...]}`. */
interface StoredReply {
  v?: unknown[];
  u?: number[];
  e?: unknown;
  p?: unknown[];
}

/** One of Nest's response packets, as its transports send a reply through their serializer. */
export interface ResponsePacket {
  id: string;
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

/**
 * A handler's answer as Nest's response packets: one per value, the last one disposing (a
 * packet that only disposes when there is none), or the error.
 */
export function responsePackets(record: { values: unknown[] } | { error: unknown }, id: string): ResponsePacket[] {
  if ('error' in record) return [{ id, err: record.error ?? null, isDisposed: true }];
  if (record.values.length === 0) return [{ id, isDisposed: true }];
  return record.values.map((response, i) =>
    i === record.values.length - 1 ? { id, response, isDisposed: true } : { id, response },
  );
}

/**
 * The stored text of a reply, serialized as Nest's transports serialize theirs (JSON; an Error
 * instance keeps only its own enumerable fields), or why it cannot be stored: a value JSON
 * cannot hold (a BigInt, a cycle), or a text over `maxBytes`. The reason never quotes the value.
 */
export function encodeReply(record: ReplyRecord, maxBytes: number): { text: string } | { problem: string } {
  let stored: StoredReply;
  if ('packets' in record) {
    stored = { p: record.packets };
  } else if ('error' in record) {
    stored = { e: record.error ?? null };
  } else {
    const undefinedAt = record.values.flatMap((value, i) => (value === undefined ? [i] : []));
    stored = undefinedAt.length > 0 ? { v: record.values, u: undefinedAt } : { v: record.values };
  }
  let text: string;
  try {
    text = JSON.stringify(stored);
  } catch (error) {
    // JSON.stringify's own text may name the fields of a cycle: only its kind is said.
    return { problem: MESSAGES.valueNotJson(`JSON.stringify threw a ${asError(error).name}`) };
  }
  const bytes = Buffer.byteLength(text);
  return bytes > maxBytes ? { problem: MESSAGES.valueTooLarge(bytes, maxBytes) } : { text };
}

/** A stored reply as the caller reads it; undefined for a text this package did not write. */
export function decodeReply(text: string): ReplyRecord | undefined {
  let stored: StoredReply;
  try {
    stored = JSON.parse(text) as StoredReply;
  } catch {
    return undefined;
  }
  if (typeof stored !== 'object' || stored === null) return undefined;
  if ('e' in stored) return { error: stored.e };
  if (Array.isArray(stored.p)) return { packets: stored.p };
  if (!Array.isArray(stored.v)) return undefined;
  const values = stored.v;
  for (const i of stored.u ?? []) values[i] = undefined;
  return { values };
}
