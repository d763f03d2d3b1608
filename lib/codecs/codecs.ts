/** The codecs this package ships (see docs/codecs.md); a codec of your own implements the Codec interface. */
export { createEncryptionCodec } from './encryption-codec';
export { createCompressionCodec } from './compression-codec';
export { chainCodecs } from './chain-codecs';
