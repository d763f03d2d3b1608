/**
 * Turns the bytes of a stored value into other bytes and back: encryption, compression or a
 * serializer of your own. The queue hands it the UTF-8 JSON of what carries user data (a payload
 * with its headers, a result, a step's result, a transport reply, a progress value) and stores what
 * it returns; either method may answer a promise. See docs/codecs.md.
 */
export interface Codec {
  /** The stored form of `data`. */
  encode(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /**
   * `data` back from its stored form. Throw when it cannot be (a failed authentication, a key it
   * lacks): the message goes to the dead letters with reason `undecodable`.
   */
  decode(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /**
   * The id of the key new values are encoded with, when the codec has keys: `reencrypt` skips a
   * value already under it. Left out, `reencrypt` encodes every stored value again.
   */
  readonly keyId?: string;
}

/** A key of {@link EncryptionCodecOptions}: 32 bytes, or their base64 or hex text. */
export type EncryptionKey = Uint8Array | string;

/** Keys by id, as `createEncryptionCodec` takes them. */
export type EncryptionKeys = Record<string, EncryptionKey>;

/** Options of `createEncryptionCodec`. */
export interface EncryptionCodecOptions {
  /**
   * AES-256 keys by id (ids of 1-64 characters of `A-Z a-z 0-9 . _ -`), or a function that
   * resolves them once (from a KMS, say) when the codec is first used. Every key a stored value
   * names must stay here while such values exist; keys are never logged.
   */
  keys: EncryptionKeys | (() => EncryptionKeys | Promise<EncryptionKeys>);
  /** The id of the key new values are encrypted with: one of `keys`. */
  currentKeyId: string;
}

/** Options of `createCompressionCodec`. */
export interface CompressionCodecOptions {
  /**
   * `gzip` or `brotli` (both from `node:zlib`).
   * @defaultValue `'gzip'`
   */
  algorithm?: 'gzip' | 'brotli';
  /**
   * Values smaller than this many bytes are stored as they are (compressing them costs more
   * than it saves).
   * @defaultValue `1024`
   */
  minBytes?: number;
}
