import { keyedPushArguments, pushArguments, type EncodedPush } from '../../lib/engine/codecs/wire-format';

/** push.lua's and push-keyed.lua's ARGV (see their headers): relay receipts cost a push without them nothing. */
describe('push arguments', () => {
  const plain: EncodedPush[] = [
    { id: 'a', body: '|1' },
    { id: 'b', body: '|2' },
  ];

  it('encodes a plain push as before: the format flag, an empty shape, then id and body each', () => {
    expect(pushArguments(plain, true)).toEqual(['1', '', 'a', '|1', 'b', '|2']);
    expect(pushArguments(plain, false)).toEqual(['0', '', 'a', '|1', 'b', '|2']);
  });

  it("marks a call with receipts ('1r') and ends it with one receipt per message, '' for none", () => {
    const items: EncodedPush[] = [
      { id: 'a', body: '|1', receipt: 'r1' },
      { id: 'b', body: '|2', options: [5, 0, 3, 'g'] },
    ];
    expect(pushArguments(items, true)).toEqual(['1r', 'sl', 'a', '|1', 'b', '|2', 5, 0, 3, 'g', 'r1', '']);
    expect(pushArguments([{ id: 'a', body: '|1', receipt: 'r1' }], false)).toEqual(['0r', '', 'a', '|1', 'r1']);
  });

  it("puts 'r' before the keyed messages and their receipts after them; none without receipts", () => {
    const keyed: EncodedPush = { id: 'k', body: '|1', keyed: { mode: 't', key: 'x', extra: 100 } };
    expect(keyedPushArguments([keyed])).toEqual(['t', 'x', 'k', '|1', 0, 0, 0, 100, '']);
    expect(keyedPushArguments([{ ...keyed, receipt: 'r1' }, keyed])).toEqual([
      'r',
      ...['t', 'x', 'k', '|1', 0, 0, 0, 100, ''],
      ...['t', 'x', 'k', '|1', 0, 0, 0, 100, ''],
      'r1',
      '',
    ]);
  });
});
