import type { PayloadDecodeReason } from '../errors';

/**
 * Why a built-in codec could not decode a value, said without the value or a key: the queue turns
 * it into a PayloadDecodeError that names the topic.
 */
export class CodecFailure extends Error {
  constructor(
    readonly reason: PayloadDecodeReason,
    readonly keyId?: string,
  ) {
    super(`stored value not decoded: ${reason}`);
    this.name = 'CodecFailure';
  }
}
