import { resealStored, type TextResealer } from '../../lib/engine/codecs/reseal-format';

/** Seals as `~<key>:<text>`: a text sealed under `key` already is left as it is. */
const under =
  (key: string): TextResealer =>
  (text) =>
    Promise.resolve(text.startsWith(`~${key}:`) ? undefined : `~${key}:${text.replace(/^~\w+:/, '')}`);

describe('resealing a stored value (reencrypt)', () => {
  it('replaces a sealed body\'s "e", keeping its members in order (m last)', async () => {
    const body = '{"t":1700000000000,"e":"~v1:{\\"p\\":1}","g":"g1","f":1,"m":3}';
    expect(await resealStored(body, under('v2'))).toBe(
      '{"t":1700000000000,"e":"~v2:{\\"p\\":1}","g":"g1","f":1,"m":3}',
    );
    expect(await resealStored('{"t":1,"e":"~v2:x"}', under('v2'))).toBeUndefined();
  });

  it("seals a plain body's payload and headers from their raw text (every digit kept)", async () => {
    const body = '{"t":5,"p":{"n":12345678901234567890,"s":"a,}]\\"{"},"h":{"k":"v"},"m":2}';
    const sealed = await resealStored(body, under('v2'));
    expect(sealed).toBe(
      `{"t":5,"e":${JSON.stringify('~v2:{"p":{"n":12345678901234567890,"s":"a,}]\\"{"},"h":{"k":"v"}}')},"m":2}`,
    );
    expect(await resealStored(body, () => Promise.resolve(undefined))).toBeUndefined();
  });

  it('seals a compact body into the JSON form', async () => {
    expect(await resealStored('lp0x1s|[1,2]', under('v2'))).toBe(
      `{"t":${parseInt('lp0x1s', 36)},"e":${JSON.stringify('~v2:{"p":[1,2]}')}}`,
    );
  });

  it('reseals a completed record\'s kept body and result, a plain result into "s"', async () => {
    const kept = '{"t":2,"e":"~v1:{\\"p\\":7}"}';
    const record = `{"c":9,"t":2,"a":1,"b":${JSON.stringify(kept)},"d":1.5,"r":{"ok":true}}`;
    const sealed = JSON.parse((await resealStored(record, under('v2')))!) as Record<string, unknown>;
    expect(Object.keys(sealed)).toEqual(['c', 't', 'a', 'b', 'd', 's']);
    expect(sealed.b).toBe('{"t":2,"e":"~v2:{\\"p\\":7}"}');
    expect(sealed.s).toBe('~v2:{"ok":true}');
    // cjson writes the kept body with its slashes escaped: read as JSON, not as text.
    const escaped = '{"c":9,"t":2,"b":"{\\"t\\":2,\\"e\\":\\"~v1:a\\/b\\"}","s":"~v2:x"}';
    expect(JSON.parse((await resealStored(escaped, under('v2')))!)).toEqual({
      c: 9,
      t: 2,
      b: '{"t":2,"e":"~v2:a/b"}',
      s: '~v2:x',
    });
  });

  it('leaves a text of no known form alone', async () => {
    expect(await resealStored('not json', under('v2'))).toBeUndefined();
    expect(await resealStored('{"t":1}', under('v2'))).toBeUndefined();
  });

  it('passes on what the resealer throws (a value it cannot open)', async () => {
    const failing: TextResealer = () => Promise.reject(new Error('unknown key'));
    await expect(resealStored('{"t":1,"e":"~v0:x"}', failing)).rejects.toThrow('unknown key');
  });
});
