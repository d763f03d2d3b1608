import { InvalidPayloadError, PayloadTooLargeError } from '../errors';
import type { DeadLetter, PushOptions, ReservedMessage } from '../interfaces';
import { MESSAGES } from '../redis-ack-queue.messages';

/**
 * The stored body is one compact JSON object: `p` payload, `h` headers, `m` maxAttempts,
 * and `t` enqueuedAt, which the push script adds from the server clock.
 */
interface StoredBody {
  p: unknown;
  h?: Record<string, string>;
  m?: number;
  t: number;
}

/** Serializes a payload, refusing anything JSON would silently change or drop. */
export function encodeBody(topic: string, payload: unknown, options: PushOptions, maxBytes: number): string {
  if (payload === undefined) throw new InvalidPayloadError(topic, MESSAGES.payloadUndefined(topic));
  let json: string;
  try {
    json = JSON.stringify(payload, strictJson);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new InvalidPayloadError(topic, MESSAGES.payloadNotSerializable(topic, reason), { cause: error });
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) throw new PayloadTooLargeError(topic, bytes, maxBytes);
  let body = `{"p":${json}`;
  if (options.headers && Object.keys(options.headers).length > 0) body += `,"h":${JSON.stringify(options.headers)}`;
  if (options.maxAttempts !== undefined) body += `,"m":${options.maxAttempts}`;
  return `${body}}`;
}

function strictJson(this: unknown, key: string, value: unknown): unknown {
  switch (typeof value) {
    case 'function':
    case 'symbol':
      throw new TypeError(`${describeKey(key)} is a ${typeof value}`);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${describeKey(key)} is ${value}`);
      return value;
    case 'object':
      if (value instanceof Map || value instanceof Set) {
        throw new TypeError(`${describeKey(key)} is a ${value.constructor.name}`);
      }
      return value;
    default:
      return value;
  }
}

function describeKey(key: string): string {
  return key === '' ? 'the value' : `field "${key}"`;
}

/** Turns one reserve result back into a message; the script already checked the JSON. */
export function decodeReserved<T>(
  topic: string,
  id: string,
  raw: string,
  attempt: number,
  token: string,
  leaseDeadline: number,
  defaultMaxAttempts: number,
): ReservedMessage<T> {
  const body = JSON.parse(raw) as StoredBody;
  return {
    id,
    topic,
    payload: body.p as T,
    headers: body.h ?? {},
    attempt,
    maxAttempts: body.m ?? defaultMaxAttempts,
    enqueuedAt: body.t,
    token,
    leaseDeadline,
  };
}

/** Reads a stored body that may be damaged (dead letters); never throws. */
export function tryDecodeBody(raw: string | null): Partial<StoredBody> {
  if (raw === null) return {};
  try {
    const body = JSON.parse(raw) as unknown;
    return typeof body === 'object' && body !== null ? (body as StoredBody) : {};
  } catch {
    return {};
  }
}

/** The dead-list script's reply (id, info, body per letter) as dead letters; unreadable parts default. */
export function decodeDeadLetters<T>(topic: string, reply: (string | null)[]): DeadLetter<T>[] {
  const letters: DeadLetter<T>[] = [];
  for (let i = 0; i < reply.length; i += 3) {
    const info = tryDecodeBody(reply[i + 1]) as { r?: string; e?: string; a?: number; t?: number };
    const body = tryDecodeBody(reply[i + 2]);
    letters.push({
      id: String(reply[i]),
      topic,
      reason: info.r ?? 'unknown',
      error: info.e ?? null,
      attempt: info.a ?? 0,
      deadAt: info.t ?? 0,
      payload: body.p as T | undefined,
      headers: body.h ?? {},
      enqueuedAt: body.t,
    });
  }
  return letters;
}
