import type { CliIo } from '../../lib/cli/cli-io';
import { inert, printJson, printRecord } from '../../lib/cli/output';

/** What the CLI prints, written into a string. */
function printed(print: (io: CliIo) => void): string {
  let text = '';
  print({
    out: (t) => void (text += t),
    err: (t) => void (text += t),
    interactive: false,
    ask: () => Promise.resolve(''),
  });
  return text;
}

/** Characters a terminal acts on, or that hide or reorder text. */
const UNSAFE = [
  '\x1b',
  '\x07',
  '\x00',
  '\r',
  '\t',
  '\x7f',
  '\x9b',
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  '\u2028',
  '\udb40\udc01',
];

describe('CLI output of what users control', () => {
  it('shows every unsafe character as a visible escape, and leaves other text alone', () => {
    expect(inert('a\x1b[2Jb\x9b31m\u202eexe\n\t\r\x7f')).toBe('a\\x1b[2Jb\\x9b31m\\u{202e}exe\\n\\t\\r\\x7f');
    expect(inert('lone \ud800 and \udfff')).toBe('lone \\u{d800} and \\u{dfff}');
    expect(inert('tag \u{E0001}')).toBe('tag \\u{e0001}');
    expect(inert('order-7 é 😀 日本 \\x1b')).toBe('order-7 é 😀 日本 \\x1b');
    for (const char of UNSAFE) expect(inert(`a${char}b`)).toMatch(/^a\\[\x20-\x7e]+b$/);
  });

  it('--json escapes them too, so the output parses to the same value', () => {
    const value = { id: UNSAFE.join(''), [`key${UNSAFE.join('')}`]: ['\ud800'] };
    const json = printed((io) => printJson(io, value));
    expect(json.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
    expect(JSON.parse(json)).toEqual(value);
  });

  it("prints a record's multi-line value as indented lines, other values and names on one line", () => {
    expect(printed((io) => printRecord(io, { id: 'a\nb', error: 'Error: x\x1b\n    at y', [`step \x1b`]: 1 }))).toBe(
      [
        `id:${' '.repeat(8)}a`,
        `${' '.repeat(11)}b`,
        `error:${' '.repeat(5)}Error: x\\x1b`,
        `${' '.repeat(11)}    at y`,
        'step \\x1b: 1',
        '',
      ].join('\n'),
    );
  });
});
