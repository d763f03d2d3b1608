import { MESSAGES } from '../common/redis-ack-queue.messages';
import { asError } from '../errors/error-text';

/**
 * How a request carries its way back, and how its reply is stored: headers of the request
 * message, and the reply's JSON text (reply.lua stores it as it is).
 */

/** The request header naming the caller's channel (`<prefix>:reply-to:<uuid>`). */
export const REPLY_TO_HEADER = 'ackq-reply-to';
/** The request header giving how long (ms) the caller waits: how long its reply is kept. */
export const REPLY_TTL_HEADER = 'ackq-reply-ttl-ms';

/** What a handler answered: its values in order (then completion), or the error its exception filters made. */
export type ReplyRecord = { values: unknown[] } | { error: unknown };

/** A reply's JSON: `{"v":[...]}` (with `"u"`, the positions of undefined values) or `{"e":...}`. */
interface StoredReply {
  v?: unknown[];
  u?: number[];
  e?: unknown;
}

/**
 * The stored text of a reply, serialized as Nest's transports serialize theirs (JSON; an Error
 * instance keeps only its own enumerable fields), or why it cannot be stored: a value JSON
 * cannot hold (a BigInt, a cycle), or a text over `maxBytes`. The reason never quotes the value.
 */
export function encodeReply(record: ReplyRecord, maxBytes: number): { text: string } | { problem: string } {
  let stored: StoredReply;
  if ('error' in record) {
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
  if (!Array.isArray(stored.v)) return undefined;
  const values = stored.v;
  for (const i of stored.u ?? []) values[i] = undefined;
  return { values };
}
