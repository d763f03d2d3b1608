import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * Why a stored value could not be decoded: `authentication-failed` (changed in Redis, or the wrong
 * key under its id), `unknown-key` (its key id is not among the codec's keys), `no-codec` (written
 * by a codec this process lacks), `corrupt` (not a codec's output at all) or `codec-failed` (a
 * custom codec threw).
 */
export type PayloadDecodeReason = 'authentication-failed' | 'unknown-key' | 'no-codec' | 'corrupt' | 'codec-failed';

/**
 * A stored value its codec could not decode (see docs/codecs.md). A message whose payload fails
 * so goes to the dead letters with reason `undecodable` (`no-codec` excepted: the message waits
 * for a process that has the codec, see docs/codecs.md); other values (a result, a reply) fail
 * the call that read them. The text names the topic and the key id, never the value or a key.
 */
export class PayloadDecodeError extends RedisAckQueueError {
  /** Always `PAYLOAD_UNDECODABLE`. */
  readonly code = 'PAYLOAD_UNDECODABLE';
  /**
   * @param topic - The topic the value belongs to.
   * @param reason - Why it could not be decoded.
   * @param keyId - The id of the key the value names, when it names one.
   */
  constructor(
    readonly topic: string,
    readonly reason: PayloadDecodeReason,
    readonly keyId?: string,
  ) {
    super(MESSAGES.valueUndecodable(topic, reason, keyId));
  }
}

/** `reencrypt` called for a topic that has no codec in this service (option `codec` or `topicCodecs`). */
export class ReencryptWithoutCodecError extends RedisAckQueueError {
  /** Always `REENCRYPT_WITHOUT_CODEC`. */
  readonly code = 'REENCRYPT_WITHOUT_CODEC';
  /** @param topic - The topic it was called for. */
  constructor(readonly topic: string) {
    super(MESSAGES.reencryptWithoutCodec(topic));
  }
}

/** A key of `createEncryptionCodec` that is not 32 bytes (or their base64 or hex text), or an id outside its shape. */
export class InvalidEncryptionKeyError extends RedisAckQueueError {
  /** Always `INVALID_ENCRYPTION_KEY`. */
  readonly code = 'INVALID_ENCRYPTION_KEY';
  /**
   * @param keyId - The id of the key (ids are not secret; the key is never kept or shown).
   * @param problem - What is wrong with it.
   */
  constructor(
    readonly keyId: string,
    problem: string,
  ) {
    super(MESSAGES.codecKey(keyId, problem));
  }
}

/**
 * The key provider of `createEncryptionCodec` (a function, e.g. a KMS call) failed or answered
 * keys of the wrong shape: nothing was encrypted or decrypted. It is asked again on the next use;
 * a delivery that met it is retried as any failure. Its cause is kept; no key is ever shown.
 */
export class EncryptionKeysUnavailableError extends RedisAckQueueError {
  /** Always `ENCRYPTION_KEYS_UNAVAILABLE`. */
  readonly code = 'ENCRYPTION_KEYS_UNAVAILABLE';
  /** @param cause - What the provider threw, or the InvalidEncryptionKeyError of what it answered. */
  constructor(cause: unknown) {
    super(MESSAGES.encryptionKeysUnavailable, { cause });
  }
}
