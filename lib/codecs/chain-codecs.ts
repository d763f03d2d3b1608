import { InvalidOptionError } from '../errors';
import type { Codec } from '../interfaces';

/**
 * One codec of several: encodes through them in order (`chainCodecs(compress, encrypt)` compresses,
 * then encrypts) and decodes in reverse. Its keyId is the last one a codec of the chain has.
 */
export function chainCodecs(...codecs: Codec[]): Codec {
  codecs.forEach((codec, i) => {
    if (typeof codec?.encode !== 'function' || typeof codec.decode !== 'function')
      throw new InvalidOptionError(`chainCodecs argument ${i + 1}`, undefined, 'a codec { encode, decode }', true);
  });
  const keyId = codecs.reduce<string | undefined>((last, codec) => codec.keyId ?? last, undefined);
  return {
    ...(keyId !== undefined && { keyId }),
    async encode(data) {
      let bytes = data;
      for (const codec of codecs) bytes = await codec.encode(bytes);
      return bytes;
    },
    async decode(data) {
      let bytes = data;
      for (let i = codecs.length - 1; i >= 0; i--) bytes = await codecs[i].decode(bytes);
      return bytes;
    },
  };
}
