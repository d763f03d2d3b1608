import { PayloadDecodeError, RedisAckQueueError } from '../errors';
import type { Codec } from '../interfaces';
import { CodecFailure } from './codec-failure';
import { encryptedKeyId } from './encryption-codec';
import { isPending, type Settling } from './settling';

/**
 * A value a codec wrote, as stored: `~` and the codec's bytes in base64. No JSON text starts with
 * `~`, so a sealed value and a plain one never read alike, wherever either may be stored.
 */
const SEALED_MARK = 126; // '~'

/** Whether a stored text is a codec's output (see SEALED_MARK). */
export function isSealed(text: string): boolean {
  return text.charCodeAt(0) === SEALED_MARK;
}

/** The stored text of JSON text `json` under `codec` (at once when the codec answers at once). */
export function sealText(codec: Codec, json: string): Settling<string> {
  const bytes = codec.encode(Buffer.from(json, 'utf8'));
  return isPending(bytes) ? bytes.then(sealedOf) : sealedOf(bytes);
}

function sealedOf(bytes: Uint8Array): string {
  return `~${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}

/**
 * The JSON text a sealed text holds (at once when the codec answers at once); a
 * PayloadDecodeError naming `topic`, thrown or rejected, when `codec` is missing or cannot decode
 * it (never the value, never a key).
 */
export function openText(topic: string, codec: Codec | undefined, sealed: string): Settling<string> {
  if (!codec) throw new PayloadDecodeError(topic, 'no-codec', describeSealed(sealed).keyId);
  let bytes: Settling<Uint8Array>;
  try {
    bytes = codec.decode(Buffer.from(sealed.slice(1), 'base64'));
  } catch (error) {
    throw decodeFailure(topic, sealed, error);
  }
  if (!isPending(bytes)) return textOf(bytes);
  return bytes.then(textOf, (error: unknown) => {
    throw decodeFailure(topic, sealed, error);
  });
}

function textOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** What a codec's failure becomes: a PayloadDecodeError, or (not the value's fault) itself. */
function decodeFailure(topic: string, sealed: string, error: unknown): unknown {
  if (error instanceof CodecFailure) return new PayloadDecodeError(topic, error.reason, error.keyId);
  // Not the value's fault (its key provider failed, say): the caller retries as for any failure.
  if (error instanceof RedisAckQueueError) return error;
  // A custom codec's own error may quote what it read: only its kind is kept.
  return new PayloadDecodeError(topic, 'codec-failed', describeSealed(sealed).keyId);
}

/** What an operator may see of a sealed value without its key: its stored size and the key id it names. */
export interface SealedDescription {
  /** Bytes the codec wrote (before base64). */
  bytes: number;
  /** The id of the key that encrypted it, for a value of createEncryptionCodec. */
  keyId?: string;
}

/** Describes a sealed text without decoding it. */
export function describeSealed(sealed: string): SealedDescription {
  const bytes = Buffer.from(sealed.slice(1, 1 + 96), 'base64');
  const keyId = encryptedKeyId(bytes);
  const size = Math.floor(((sealed.length - 1) * 3) / 4) - (sealed.endsWith('==') ? 2 : sealed.endsWith('=') ? 1 : 0);
  return { bytes: size, ...(keyId !== undefined && { keyId }) };
}
