import type { CliIo } from './cli-io';

/** One row of a table: column name -> value (printed as text; undefined and null as `-`). */
export type Row = Record<string, unknown>;

/** Prints a value as indented JSON (the `--json` output). */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints rows as a table aligned on columns, with a header line; `empty` when there are none. */
export function printTable(io: CliIo, rows: Row[], columns: string[], empty: string): void {
  if (rows.length === 0) {
    io.out(`${empty}\n`);
    return;
  }
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i].length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  io.out(`${[line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')}\n`);
}

/** Prints one record as `field: value` lines, fields aligned. */
export function printRecord(io: CliIo, record: Row): void {
  const fields = Object.entries(record).filter(([, value]) => value !== undefined);
  const width = Math.max(...fields.map(([field]) => field.length));
  io.out(`${fields.map(([field, value]) => `${`${field}:`.padEnd(width + 1)} ${cell(value)}`).join('\n')}\n`);
}

/** An epoch-ms time as ISO text (undefined stays undefined). */
export function time(ms: number | null | undefined): string | undefined {
  return ms === undefined || ms === null ? undefined : new Date(ms).toISOString();
}

/** A value as one line of JSON cut at `max` characters (with its length said), `undefined` for undefined. */
export function shortJson(value: unknown, max = 120): string {
  if (value === undefined) return 'undefined';
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
