import { createDecipheriv, randomBytes } from 'node:crypto';
import { createEncryptionCodec } from '../../lib';

/**
 * The encryption codec's stored bytes, read with node:crypto alone (so the format is what
 * docs/codecs.md says, whatever the codec does inside): 0xE1, the key id's length, the key id, a
 * 12-byte IV, the ciphertext and the 16-byte GCM tag; and no IV twice, across the codec's IV blocks.
 */
describe('encryption codec: stored format', () => {
  const key = randomBytes(32);
  const codec = createEncryptionCodec({ keys: { 'key-7': key }, currentKeyId: 'key-7' });

  it('writes 0xE1, key id, IV, ciphertext and tag: 30 bytes and the key id added to each value', () => {
    const data = Buffer.from(JSON.stringify({ p: { text: 'x'.repeat(1000) }, h: {} }));
    const sealed = Buffer.from(codec.encode(data) as Uint8Array);
    expect(sealed.length).toBe(data.length + 2 + 'key-7'.length + 12 + 16);
    expect(sealed[0]).toBe(0xe1);
    expect(sealed.subarray(2, 2 + sealed[1]).toString()).toBe('key-7');
    const ivAt = 2 + sealed[1];
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(ivAt, ivAt + 12));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const plain = Buffer.concat([decipher.update(sealed.subarray(ivAt + 12, sealed.length - 16)), decipher.final()]);
    expect(plain.equals(data)).toBe(true);
    expect(Buffer.from(codec.decode(sealed) as Uint8Array).equals(data)).toBe(true);
  });

  it('gives every value an IV of its own, over several blocks of IVs', () => {
    const ivs = new Set<string>();
    const data = Buffer.from('{"p":1}');
    for (let i = 0; i < 5_000; i++) {
      const sealed = Buffer.from(codec.encode(data) as Uint8Array);
      ivs.add(sealed.subarray(2 + sealed[1], 2 + sealed[1] + 12).toString('hex'));
    }
    expect(ivs.size).toBe(5_000);
  });
});
