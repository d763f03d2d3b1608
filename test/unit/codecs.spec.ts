import { randomBytes } from 'node:crypto';
import { chainCodecs, createCompressionCodec, createEncryptionCodec } from '../../lib/codecs/codecs';
import { describeSealed, isSealed, openText as openNow, sealText as sealNow } from '../../lib/codecs/sealed-text';
import {
  EncryptionKeysUnavailableError,
  InvalidEncryptionKeyError,
  InvalidOptionError,
  PayloadDecodeError,
} from '../../lib/errors';
import type { Codec } from '../../lib/interfaces';
import { ValueCodecs } from '../../lib/queue/value-codecs';

/** As promises, whether the codec answered at once or not (a sync failure becomes a rejection). */
const sealText = (...args: Parameters<typeof sealNow>) => Promise.resolve().then(() => sealNow(...args));
const openText = (...args: Parameters<typeof openNow>) => Promise.resolve().then(() => openNow(...args));

const v1 = randomBytes(32);
const v2 = randomBytes(32);
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
const bytes = (value: string) => Buffer.from(value, 'utf8');

/** The reason of the PayloadDecodeError `work` rejects with. */
async function reasonOf(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PayloadDecodeError);
  return (error as PayloadDecodeError).reason;
}

describe('encryption codec', () => {
  it('round-trips under its key, with a fresh IV per value and 32 bytes added for a 2-character key id', async () => {
    const codec = createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' });
    const plain = bytes('{"p":"secret"}');
    const a = await codec.encode(plain);
    const b = await codec.encode(plain);
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).not.toBe(0);
    expect(a.length - plain.length).toBe(32);
    expect(text(await codec.decode(a))).toBe('{"p":"secret"}');
    expect(Buffer.from(a).includes(Buffer.from('secret'))).toBe(false);
    expect(codec.keyId).toBe('v1');
  });

  it('rotates: values of the old key stay readable while it is configured; new ones use the current key', async () => {
    const old = createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' });
    const rotated = createEncryptionCodec({ keys: { v1, v2 }, currentKeyId: 'v2' });
    const onlyNew = createEncryptionCodec({ keys: { v2 }, currentKeyId: 'v2' });
    const sealedOld = await sealText(old, '"a"');
    const sealedNew = await sealText(rotated, '"b"');
    expect(describeSealed(sealedOld).keyId).toBe('v1');
    expect(describeSealed(sealedNew).keyId).toBe('v2');
    expect(await openText('t', rotated, sealedOld)).toBe('"a"');
    expect(await openText('t', onlyNew, sealedNew)).toBe('"b"');
    expect(await reasonOf(openText('t', onlyNew, sealedOld))).toBe('unknown-key');
  });

  it('refuses a changed value (authentication) and a value that is not its own, naming neither value nor key', async () => {
    const codec = createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' });
    const sealed = Buffer.from(await codec.encode(bytes('"canary-7"')));
    sealed[sealed.length - 20] ^= 1;
    const tampered = `~${sealed.toString('base64')}`;
    const error = await openText('orders', codec, tampered).catch((e: unknown) => e as PayloadDecodeError);
    expect(error).toBeInstanceOf(PayloadDecodeError);
    expect((error as PayloadDecodeError).reason).toBe('authentication-failed');
    expect((error as PayloadDecodeError).code).toBe('PAYLOAD_UNDECODABLE');
    expect((error as PayloadDecodeError).message).toContain('"orders"');
    expect((error as PayloadDecodeError).message).not.toContain('canary');
    expect((error as PayloadDecodeError).message).not.toContain(v1.toString('base64'));
    // Same key id, another key: authentication fails too.
    const other = createEncryptionCodec({ keys: { v1: v2 }, currentKeyId: 'v1' });
    expect(await reasonOf(openText('t', other, await sealText(codec, '1')))).toBe('authentication-failed');
    expect(await reasonOf(openText('t', codec, '~AAAA'))).toBe('corrupt');
    expect(await reasonOf(openText('t', undefined, await sealText(codec, '1')))).toBe('no-codec');
  });

  it('takes keys as bytes, base64 or hex, and from an async provider resolved once', async () => {
    let asked = 0;
    const provider = createEncryptionCodec({
      keys: async () => {
        asked += 1;
        await new Promise((resolve) => setImmediate(resolve));
        return { k1: v1.toString('base64'), k2: v2.toString('hex') };
      },
      currentKeyId: 'k2',
    });
    const sealed = await Promise.all([sealText(provider, '1'), sealText(provider, '2')]);
    expect(await openText('t', provider, sealed[1])).toBe('2');
    expect(asked).toBe(1);
    const byBytes = createEncryptionCodec({ keys: { k2: v2 }, currentKeyId: 'k2' });
    expect(await openText('t', byBytes, sealed[0])).toBe('1');
  });

  it('refuses bad keys and options with typed errors that never show a key', async () => {
    const short = randomBytes(16);
    const error = (() => {
      try {
        createEncryptionCodec({ keys: { v1: short }, currentKeyId: 'v1' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(InvalidEncryptionKeyError);
    expect(error!.message).not.toContain(short.toString('base64'));
    expect(error!.message).not.toContain(short.toString('hex'));
    expect(() => createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v2' })).toThrow(InvalidEncryptionKeyError);
    expect(() => createEncryptionCodec({ keys: { 'bad id': v1 }, currentKeyId: 'v1' })).toThrow(
      InvalidEncryptionKeyError,
    );
    expect(() => createEncryptionCodec({ keys: { v1 }, currentKeyId: '' })).toThrow(InvalidOptionError);
    expect(() => createEncryptionCodec(null as never)).toThrow(InvalidOptionError);
    // A provider that answers a bad key fails each use (asked again), never logging it.
    const secret = 'not-a-key-but-a-secret';
    const bad = createEncryptionCodec({ keys: () => ({ v1: secret }), currentKeyId: 'v1' });
    const failure = await sealText(bad, '1').catch((e: unknown) => e as Error);
    expect(failure).toBeInstanceOf(EncryptionKeysUnavailableError);
    expect((failure as Error).cause).toBeInstanceOf(InvalidEncryptionKeyError);
    expect((failure as Error).message).not.toContain(secret);
    expect(((failure as Error).cause as Error).message).not.toContain(secret);
    // A provider that fails (a KMS outage) is not the value's fault: no PayloadDecodeError, asked again next time.
    let calls = 0;
    const flaky = createEncryptionCodec({
      keys: () => {
        calls += 1;
        if (calls === 1) throw new Error('kms down');
        return { v1 };
      },
      currentKeyId: 'v1',
    });
    const sealed = await sealText(createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' }), '"x"');
    expect(await openText('t', flaky, sealed).catch((e: unknown) => e)).toBeInstanceOf(EncryptionKeysUnavailableError);
    expect(await openText('t', flaky, sealed)).toBe('"x"');
  });
});

describe('compression codec', () => {
  it.each(['gzip', 'brotli'] as const)(
    '%s: compresses from minBytes, keeps smaller values, reads back both',
    async (algorithm) => {
      const codec = createCompressionCodec({ algorithm, minBytes: 64 });
      const big = bytes(JSON.stringify({ p: 'x'.repeat(5_000) }));
      const packed = await codec.encode(big);
      expect(packed.length).toBeLessThan(big.length / 10);
      expect(text(await codec.decode(packed))).toBe(text(big));
      const small = bytes('{"p":1}');
      expect(text(await codec.decode(await codec.encode(small)))).toBe('{"p":1}');
      // A value written before compression was chained in reads as it is.
      expect(text(await codec.decode(small))).toBe('{"p":1}');
    },
  );

  it('refuses bad options', () => {
    expect(() => createCompressionCodec({ algorithm: 'zstd' as never })).toThrow(InvalidOptionError);
    expect(() => createCompressionCodec({ minBytes: -1 })).toThrow(InvalidOptionError);
  });
});

describe('chainCodecs and sealed texts', () => {
  it('compresses then encrypts, decodes in reverse, and reports the encryption key id', async () => {
    const chain = chainCodecs(
      createCompressionCodec({ minBytes: 0 }),
      createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' }),
    );
    const json = JSON.stringify({ p: 'y'.repeat(2_000) });
    const sealed = await sealText(chain, json);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed.length).toBeLessThan(200);
    expect(describeSealed(sealed).keyId).toBe('v1');
    expect(await openText('t', chain, sealed)).toBe(json);
    expect(chain.keyId).toBe('v1');
  });

  it('takes a custom codec, sync or async, and turns its own errors into a typed one without its text', async () => {
    const reverse: Codec = {
      encode: (data) => Buffer.from(data).reverse(),
      decode: (data) => Promise.resolve(Buffer.from(data).reverse()),
    };
    expect(await openText('t', reverse, await sealText(reverse, '{"a":1}'))).toBe('{"a":1}');
    const throwing: Codec = {
      encode: (data) => data,
      decode: () => {
        throw new Error('leaked canary-9');
      },
    };
    const error = (await openText('t', throwing, '~AAAA').catch((e: unknown) => e)) as PayloadDecodeError;
    expect(error.reason).toBe('codec-failed');
    expect(error.message).not.toContain('canary');
    expect(() => chainCodecs({} as Codec)).toThrow(InvalidOptionError);
  });

  it('answers at once when every codec does (no promise per value), later when one is async', async () => {
    const encrypt = createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' });
    const chain = chainCodecs(createCompressionCodec({ minBytes: 0 }), encrypt);
    const sealed = sealNow(chain, '{"p":1}');
    expect(typeof sealed).toBe('string');
    expect(openNow('t', chain, sealed as string)).toBe('{"p":1}');
    const later: Codec = { encode: (data) => Promise.resolve(data), decode: (data) => Promise.resolve(data) };
    const mixed = chainCodecs(later, encrypt);
    const pending = sealNow(mixed, '2');
    expect(pending).toBeInstanceOf(Promise);
    expect(await openNow('t', mixed, await pending)).toBe('2');
    expect(() => openNow('t', encrypt, '~AAAA')).toThrow(PayloadDecodeError);
  });

  it('a JSON text is never taken for a sealed one', () => {
    for (const json of ['"~x"', '{"p":"~"}', '1', 'null', '[]']) expect(isSealed(json)).toBe(false);
  });
});

describe('ValueCodecs (options codec and topicCodecs)', () => {
  const codec = createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' });

  it('writes with the topic codec, null writes JSON but still reads sealed values with the service codec', async () => {
    const own = createEncryptionCodec({ keys: { v2 }, currentKeyId: 'v2' });
    const codecs = ValueCodecs.of({ codec, topicCodecs: { plain: null, own } });
    expect(codecs.writer('other')).toBe(codec);
    expect(codecs.writer('plain')).toBeUndefined();
    expect(codecs.writer('own')).toBe(own);
    expect(await codecs.seal('plain', '1')).toBe('1');
    const sealed = await codecs.seal('other', '2');
    expect(isSealed(sealed)).toBe(true);
    expect(await codecs.open('plain', sealed)).toBe('2');
    expect(await codecs.open('plain', '3')).toBe('3');
    expect(ValueCodecs.of({}).any).toBe(false);
    expect(codecs.any).toBe(true);
  });

  it('refuses codecs of the wrong shape and bad topic names', () => {
    expect(() => ValueCodecs.of({ codec: {} as Codec })).toThrow(InvalidOptionError);
    expect(() => ValueCodecs.of({ topicCodecs: [] as never })).toThrow(InvalidOptionError);
    expect(() => ValueCodecs.of({ topicCodecs: { 'bad topic!': codec } })).toThrow();
    expect(() => ValueCodecs.of({ topicCodecs: { t: 'x' as never } })).toThrow(InvalidOptionError);
  });
});
