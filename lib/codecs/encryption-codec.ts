import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { EncryptionKeysUnavailableError, InvalidEncryptionKeyError, InvalidOptionError } from '../errors';
import type { Codec, EncryptionCodecOptions, EncryptionKey, EncryptionKeys } from '../interfaces';
import { CodecFailure } from './codec-failure';

/**
 * The first byte of an encrypted value (and its format's version): `0xE1`, then the key id's
 * length and the key id, the 12-byte IV, the ciphertext and the 16-byte GCM tag. 30 bytes plus
 * the key id's are added to each value.
 */
export const ENCRYPTED_MARK = 0xe1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * An AES-256-GCM codec (node:crypto): each value gets a random IV and names its key's id, so keys
 * rotate: new values use `currentKeyId`, older ones stay readable while their key is in `keys`.
 * A value changed in Redis fails authentication. Keys given as a function resolve once, on first
 * use.
 */
export function createEncryptionCodec(options: EncryptionCodecOptions): Codec {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('encryption codec options', options, '{ keys, currentKeyId }');
  const { keys, currentKeyId } = options;
  if (typeof currentKeyId !== 'string' || !KEY_ID.test(currentKeyId))
    throw new InvalidOptionError('currentKeyId', currentKeyId, 'a key id of 1-64 characters of A-Z a-z 0-9 . _ -');
  if (typeof keys !== 'function' && (typeof keys !== 'object' || keys === null))
    throw new InvalidOptionError('keys', undefined, 'an object of keys by id, or a function that resolves one', true);
  let resolved: Map<string, Buffer> | Promise<Map<string, Buffer>> | undefined =
    typeof keys === 'function' ? undefined : keyTable(keys, currentKeyId);
  const table = (): Map<string, Buffer> | Promise<Map<string, Buffer>> =>
    (resolved ??= Promise.resolve()
      .then(() => (keys as () => EncryptionKeys | Promise<EncryptionKeys>)())
      .then((given) => (resolved = keyTable(given, currentKeyId)))
      .catch((error: unknown) => {
        resolved = undefined; // the next use asks the provider again
        throw new EncryptionKeysUnavailableError(error);
      }));
  const idBytes = Buffer.from(currentKeyId, 'utf8');
  return {
    keyId: currentKeyId,
    encode(data) {
      const known = table();
      return known instanceof Map ? seal(known, data) : known.then((ready) => seal(ready, data));
    },
    decode(data) {
      const known = table();
      return known instanceof Map ? open(known, data) : known.then((ready) => open(ready, data));
    },
  };

  function seal(known: Map<string, Buffer>, data: Uint8Array): Uint8Array {
    const out = Buffer.allocUnsafe(2 + idBytes.length + IV_BYTES + data.length + TAG_BYTES);
    out[0] = ENCRYPTED_MARK;
    out[1] = idBytes.length;
    idBytes.copy(out, 2);
    const ivStart = 2 + idBytes.length;
    const iv = nextIv(out, ivStart);
    const cipher = createCipheriv('aes-256-gcm', known.get(currentKeyId)!, iv);
    let at = ivStart + IV_BYTES;
    at += cipher.update(data).copy(out, at);
    at += cipher.final().copy(out, at);
    cipher.getAuthTag().copy(out, at);
    return out;
  }
}

/**
 * Random IVs drawn from the CSPRNG in blocks (one randomBytes call per IV_POOL of them costs more
 * than the cipher's own work on a small value); each is written into one value and never used again.
 */
const IV_POOL = 1024;
let ivs = Buffer.alloc(0);
let ivAt = 0;

/** Copies the next unused random IV into `out` at `at`, and returns it (a view of `out`). */
function nextIv(out: Buffer, at: number): Buffer {
  if (ivAt + IV_BYTES > ivs.length) {
    ivs = randomBytes(IV_BYTES * IV_POOL);
    ivAt = 0;
  }
  ivs.copy(out, at, ivAt, ivAt + IV_BYTES);
  ivAt += IV_BYTES;
  return out.subarray(at, at + IV_BYTES);
}

function open(known: Map<string, Buffer>, data: Uint8Array): Uint8Array {
  const keyId = encryptedKeyId(data);
  if (keyId === undefined) throw new CodecFailure('corrupt');
  const start = 2 + data[1];
  if (data.length < start + IV_BYTES + TAG_BYTES) throw new CodecFailure('corrupt', keyId);
  const key = known.get(keyId);
  if (!key) throw new CodecFailure('unknown-key', keyId);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(start, start + IV_BYTES));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(bytes.subarray(start + IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new CodecFailure('authentication-failed', keyId);
  }
}

/** The key id an encrypted value names (see ENCRYPTED_MARK); undefined for other bytes. */
export function encryptedKeyId(data: Uint8Array): string | undefined {
  if (data.length < 3 || data[0] !== ENCRYPTED_MARK || data.length < 2 + data[1]) return undefined;
  const id = Buffer.from(data.buffer, data.byteOffset + 2, data[1]).toString('utf8');
  return KEY_ID.test(id) ? id : undefined;
}

/** The keys as 32-byte buffers, checked (the current one among them); never shows a key. */
function keyTable(keys: EncryptionKeys, currentKeyId: string): Map<string, Buffer> {
  if (typeof keys !== 'object' || keys === null)
    throw new InvalidOptionError('keys', undefined, 'an object of keys by id', true);
  const table = new Map<string, Buffer>();
  for (const [id, key] of Object.entries(keys)) {
    if (!KEY_ID.test(id))
      throw new InvalidEncryptionKeyError(id.slice(0, 64), 'ids are 1-64 characters of A-Z a-z 0-9 . _ -');
    table.set(id, keyBytes(id, key));
  }
  if (!table.has(currentKeyId)) throw new InvalidEncryptionKeyError(currentKeyId, 'currentKeyId names no key of keys');
  return table;
}

function keyBytes(id: string, key: EncryptionKey): Buffer {
  let bytes: Buffer | undefined;
  if (key instanceof Uint8Array) bytes = Buffer.from(key);
  else if (typeof key === 'string') {
    if (/^[0-9a-fA-F]{64}$/.test(key)) bytes = Buffer.from(key, 'hex');
    else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(key))
      bytes = Buffer.from(key, key.includes('-') || key.includes('_') ? 'base64url' : 'base64');
  }
  if (!bytes || bytes.length !== 32)
    throw new InvalidEncryptionKeyError(id, 'expected 32 bytes, as a Uint8Array or their base64 or hex text');
  return bytes;
}
