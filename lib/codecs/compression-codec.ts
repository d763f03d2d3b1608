import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { InvalidOptionError } from '../errors';
import type { Codec, CompressionCodecOptions } from '../interfaces';
import { CodecFailure } from './codec-failure';

/**
 * A compressed value starts with 0x00 (which no JSON text does) and a byte for its form: `g` gzip,
 * `b` brotli, `r` kept as it was (under minBytes). Bytes without the 0x00 are read as they are: a
 * value written before the codec compressed.
 */
const COMPRESSED_MARK = 0x00;
const GZIP = 0x67;
const BROTLI = 0x62;
const RAW = 0x72;

/** A gzip or brotli codec (node:zlib) for values of at least `minBytes`; chain it before encryption. */
export function createCompressionCodec(options: CompressionCodecOptions = {}): Codec {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('compression codec options', options, '{ algorithm?, minBytes? }');
  const { algorithm = 'gzip', minBytes = 1024 } = options;
  if (algorithm !== 'gzip' && algorithm !== 'brotli')
    throw new InvalidOptionError('algorithm', algorithm, "'gzip' or 'brotli'");
  if (!Number.isInteger(minBytes) || minBytes < 0)
    throw new InvalidOptionError('minBytes', minBytes, 'an integer of at least 0');
  const form = algorithm === 'gzip' ? GZIP : BROTLI;
  return {
    encode(data) {
      if (data.length < minBytes) return Buffer.concat([Buffer.from([COMPRESSED_MARK, RAW]), data]);
      const packed =
        form === GZIP
          ? gzipSync(data)
          : brotliCompressSync(data, {
              params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
            });
      return Buffer.concat([Buffer.from([COMPRESSED_MARK, form]), packed]);
    },
    decode(data) {
      if (data.length < 2 || data[0] !== COMPRESSED_MARK) return data;
      const body = Buffer.from(data.buffer, data.byteOffset + 2, data.byteLength - 2);
      try {
        if (data[1] === RAW) return body;
        if (data[1] === GZIP) return gunzipSync(body);
        if (data[1] === BROTLI) return brotliDecompressSync(body);
      } catch {
        throw new CodecFailure('corrupt');
      }
      throw new CodecFailure('corrupt');
    },
  };
}
