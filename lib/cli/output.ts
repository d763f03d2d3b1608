import type { SealedValueInfo } from '../interfaces';
import type { CliIo } from './cli-io';

/** One row of a table: column name -> value (printed as text; undefined and null as `-`). */
export type Row = Record<string, unknown>;

/**
 * What a terminal may act on or that hides text: C0 and C1 controls (ESC and CSI start escape
 * sequences), DEL, format characters (bidi overrides, zero-width), line and paragraph
 * separators, unpaired surrogates.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
/** The same, less what JSON.stringify escapes itself (C0 controls, unpaired surrogates). */
const UNSAFE_IN_JSON = /[\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}]/gu;
const SHORT_ESCAPES = new Map([
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
]);

/**
 * Text that users control (ids, keys, topics, step names, errors, results) as inert text for
 * a terminal: every unsafe character shown as an escape (`\x1b`, `\n`, `\u{202e}`).
 */
export function inert(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.codePointAt(0)!;
    return SHORT_ESCAPES.get(char) ?? (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u{${code.toString(16)}}`);
  });
}

/** Prints a value as indented JSON (the `--json` output), unsafe characters as JSON escapes: the same value. */
export function printJson(io: CliIo, value: unknown): void {
  const json = String(JSON.stringify(value, null, 2)).replace(UNSAFE_IN_JSON, (char) =>
    // An astral format character (U+E0001...) as its two UTF-16 units, as JSON spells it.
    char
      .split('')
      .map((unit) => `\\u${hex(unit.charCodeAt(0), 4)}`)
      .join(''),
  );
  io.out(`${json}\n`);
}

/** Prints one line of text, what users control in it made inert. */
export function printLine(io: CliIo, text: string): void {
  io.out(`${inert(text)}\n`);
}

/** Prints rows as a table aligned on columns, with a header line; `empty` when there are none. */
export function printTable(io: CliIo, rows: Row[], columns: string[], empty: string): void {
  if (rows.length === 0) return printLine(io, empty);
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i].length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  io.out(`${[line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')}\n`);
}

/**
 * Prints one record as `field: value` lines, fields aligned; a value of several lines (an error's
 * stack) goes on under its field, indented, so no line of it reads as a field.
 */
export function printRecord(io: CliIo, record: Row): void {
  const fields = Object.entries(record)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => [inert(field), value] as const);
  const width = Math.max(...fields.map(([field]) => field.length));
  const indent = `\n${' '.repeat(width + 2)}`;
  const line = (field: string, value: unknown) =>
    `${`${field}:`.padEnd(width + 1)} ${typeof value === 'string' ? value.split('\n').map(inert).join(indent) : cell(value)}`;
  io.out(`${fields.map(([field, value]) => line(field, value)).join('\n')}\n`);
}

/** An epoch-ms time as ISO text (undefined stays undefined). */
export function time(ms: number | null | undefined): string | undefined {
  return ms === undefined || ms === null ? undefined : new Date(ms).toISOString();
}

/**
 * A value a codec sealed that this process did not open (see docs/codecs.md), as the CLI shows
 * it in place of the value: `encrypted, 120 bytes, key v1 (not opened: no codec)`.
 */
export function sealedText({ bytes, keyId, undecodable }: SealedValueInfo): string {
  const key = keyId === undefined ? '' : `, key ${keyId}`;
  return `encrypted, ${bytes} bytes${key}${undecodable ? ` (not opened: ${undecodable.replaceAll('-', ' ')})` : ''}`;
}

/** A value as one line of JSON cut at `max` characters (with its length said), `undefined` for undefined. */
export function shortJson(value: unknown, max = 120): string {
  if (value === undefined) return 'undefined';
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

/** A value as one line of inert text (`-` for none; objects as JSON). */
function cell(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (typeof value === 'string') return inert(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return inert(JSON.stringify(value));
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0');
}
