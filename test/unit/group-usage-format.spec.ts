import { MinuteRecord } from '../../lib/engine/codecs/history-format';
import {
  decodeGroupCounts,
  eachGroupOf,
  encodeGroupMinute,
  GroupTally,
} from '../../lib/engine/codecs/group-usage-format';

const tally = (handled: number, handlerMs: number, retried = 0, dead = 0) =>
  Object.assign(new GroupTally(), { handled, handlerMs, retried, dead });

/** The stored form of a minute's groups (group-usage-format.ts): what history-record.lua takes and group-usage-read.lua answers. */
describe('group usage format', () => {
  it('writes each group as NUL, name, NUL, counts, with trailing zeros left out and whole ms', () => {
    const groups = new Map([
      ['a', tally(3, 12.4)],
      ['b|,:', tally(0, 7.6, 1)],
      ['c', tally(0, 0, 0, 2)],
    ]);
    expect(encodeGroupMinute(groups)).toBe('\0a\x003,12\0b|,:\x000,8,1\0c\x000,0,0,2');
    expect(encodeGroupMinute(undefined)).toBe('');
    expect(encodeGroupMinute(new Map())).toBe('');
  });

  it('reads a stored minute back: its number, and each group with counts, failed being retried + dead', () => {
    const seen: [string, string][] = [];
    expect(eachGroupOf('29000000\0a\x003,12\0b|,:\x000,8,1', (group, counts) => seen.push([group, counts]))).toBe(
      29_000_000,
    );
    expect(seen).toEqual([
      ['a', '3,12'],
      ['b|,:', '0,8,1'],
    ]);
    expect(decodeGroupCounts('3,12')).toEqual({ handled: 3, failed: 0, retried: 0, dead: 0, handlerMs: 12 });
    expect(decodeGroupCounts('0,8,1,2')).toEqual({ handled: 0, failed: 3, retried: 1, dead: 2, handlerMs: 8 });
    expect(eachGroupOf('not a minute', () => undefined)).toBeUndefined();
  });

  it('merges two records of a minute by group (a failed flush kept for the next one)', () => {
    const first = new MinuteRecord(1);
    first.groupTally('a').handled += 2;
    const second = new MinuteRecord(1);
    second.groupTally('a').handled += 1;
    second.groupTally('b').dead += 1;
    first.merge(second);
    expect(encodeGroupMinute(first.groups)).toBe('\0a\x003\0b\x000,0,0,1');
  });
});
