import { InvalidOptionError } from '../errors';
import type { Codec } from '../interfaces';
import { isPending, type Settling } from './settling';

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
  const last = codecs.length - 1;
  /** Bytes through codecs[i], codecs[i + step], ...: at once while each answers at once. */
  const through = (i: number, step: 1 | -1, bytes: Uint8Array): Settling<Uint8Array> => {
    for (; i >= 0 && i <= last; i += step) {
      const out = step === 1 ? codecs[i].encode(bytes) : codecs[i].decode(bytes);
      if (isPending(out)) return out.then((next) => through(i + step, step, next));
      bytes = out;
    }
    return bytes;
  };
  return {
    ...(keyId !== undefined && { keyId }),
    encode: (data) => through(0, 1, data),
    decode: (data) => through(last, -1, data),
  };
}
