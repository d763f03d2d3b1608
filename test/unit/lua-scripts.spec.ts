import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CORE_PRELUDE,
  PRELUDES,
  QUEUE_SCRIPTS,
  preludesOf,
  scriptSource,
  type QueueScriptName,
} from '../../lib/engine/scripts/queue-scripts';
import type { PreludeName, ScriptSpec } from '../../lib/engine/scripts/script-table';

const LUA_DIR = join(__dirname, '../../lib/engine/scripts/lua');
const read = (file: string) => readFileSync(join(LUA_DIR, file), 'utf8');
const scripts = Object.entries(QUEUE_SCRIPTS) as [QueueScriptName, ScriptSpec][];
const preludeNames = Object.keys(PRELUDES) as PreludeName[];

/** Lua code without its comments and string literals: what names it really uses. */
const code = (text: string) => text.replace(/--.*$/gm, '').replace(/'(?:[^'\\]|\\.)*'/g, "''");

/** The top-level names a prelude defines: its local functions and local state. */
const definedIn = (text: string) =>
  [...text.matchAll(/^local (?:function (\w+)|([\w, ]+?)\s*(?:=|$))/gm)].flatMap((m) =>
    m[1] ? [m[1]] : m[2].split(',').map((name) => name.trim()),
  );

/** The names of `defined` that `text` uses (not as a table field). */
const uses = (text: string, defined: string[]) =>
  defined.filter((name) => new RegExp(`(?<![.\\w])${name}\\b`).test(code(text)));

const keysRead = (text: string) => new Set([...code(text).matchAll(/\bK\.(\w+)/g)].map((m) => m[1]));

describe('Lua scripts', () => {
  it.each(scripts)('%s: the header names the keys it is registered with, in order, each once', (_name, spec) => {
    const header = [...read(spec.file).matchAll(/^-- K\.(\w+)\s/gm)].map((m) => m[1]);
    expect(header).toEqual([...spec.keys]);
    expect(new Set(spec.keys).size).toBe(spec.keys.length);
  });

  it.each(scripts)('%s: reads its keys by name, only those it is registered with', (_name, spec) => {
    const text = read(spec.file);
    expect(code(text)).not.toMatch(/KEYS\[/);
    expect([...keysRead(text)].filter((key) => !spec.keys.includes(key as never))).toEqual([]);
  });

  it.each(scripts)('%s: touches keys only through K and describes its ARGV and returns', (name, spec) => {
    const text = read(spec.file);
    expect(text).toMatch(/^-- ARGV/m);
    expect(text).toMatch(/^-- Returns/m);
    // Every redis.call names its key through K, never a built string (a PUBLISH names a channel).
    for (const call of text.matchAll(/redis\.call\('(\w+)', ([^,)]+)/g)) {
      if (call[1] === 'TIME' || (call[1] === 'PUBLISH' && call[2] === 'channel')) continue;
      expect(call[2]).toMatch(/^K\.\w+$|^key$/);
    }
    const shebang = spec.readOnly
      ? /^#!lua flags=no-writes\n/
      : spec.refusedWhenFull
        ? /^#!lua\n/
        : /^#!lua flags=allow-oom\n/;
    expect(scriptSource(name)).toMatch(shebang);
  });

  it.each(scripts)('%s: names its keys in K, in KEYS order, before the preludes', (name, spec) => {
    const line = scriptSource(name).split('\n')[1];
    expect(line).toBe(`local K = { ${spec.keys.map((key, i) => `${key} = KEYS[${i + 1}]`).join(', ')} }`);
  });

  it.each(scripts)('%s: calls only helpers of the preludes it carries', (name, spec) => {
    const carried = preludesOf(spec);
    const missing = preludeNames
      .filter((prelude) => !carried.includes(prelude))
      .flatMap((prelude) => uses(read(spec.file), definedIn(read(PRELUDES[prelude].file))));
    expect(missing).toEqual([]);
    // And names in `uses` only preludes it calls (others come in as what those need).
    const unused = (spec.uses ?? []).filter(
      (prelude) => uses(read(spec.file), definedIn(read(PRELUDES[prelude].file))).length === 0,
    );
    expect(unused).toEqual([]);
    const source = scriptSource(name);
    for (const prelude of carried) expect(source).toContain(read(PRELUDES[prelude].file));
  });

  it.each(scripts)("%s: names its operation in the user's words, as errors show it", (_name, spec) => {
    expect(spec.operation).toMatch(/^[a-z]+( [a-z]+)*$/);
  });

  it('orders the preludes by dependency: each uses only itself, the core and what it needs', () => {
    expect(
      uses(
        read(CORE_PRELUDE),
        preludeNames.flatMap((p) => definedIn(read(PRELUDES[p].file))),
      ),
    ).toEqual([]);
    preludeNames.forEach((prelude, index) => {
      const needs: readonly PreludeName[] = PRELUDES[prelude].needs;
      // What a prelude needs comes before it, so the loader's order is the dependency order.
      for (const need of needs) expect(preludeNames.indexOf(need)).toBeLessThan(index);
      const allowed = new Set([prelude, ...preludesOf({ uses: needs })]);
      const others = preludeNames.filter((p) => !allowed.has(p));
      const text = read(PRELUDES[prelude].file);
      expect(others.flatMap((p) => uses(text, definedIn(read(PRELUDES[p].file))))).toEqual([]);
      // No forward declaration assigned later: every helper is a `local function` where it is defined.
      expect(text).not.toMatch(/^\w+ = function/m);
    });
  });

  it('keeps the preludes free of key offsets and of keys no script has', () => {
    const known = new Set(scripts.flatMap(([, spec]) => spec.keys));
    for (const file of [CORE_PRELUDE, ...preludeNames.map((p) => PRELUDES[p].file)]) {
      const text = read(file);
      expect(code(text)).not.toMatch(/KEYS\[/);
      expect([...keysRead(text)].filter((key) => !known.has(key as never))).toEqual([]);
    }
  });

  it('deletes the durable steps wherever a message body is deleted, with the keys that takes', () => {
    const bodyDeleted = /redis\.call\('HDEL', K\.messages,/;
    const forgets = /\bsteps_forget\(/;
    for (const [name, spec] of scripts) {
      const texts = [read(spec.file), ...preludesOf(spec).map((p) => read(PRELUDES[p].file))].map(code);
      for (const text of texts) if (bodyDeleted.test(text)) expect([name, forgets.test(text)]).toEqual([name, true]);
      if (texts.some((text) => forgets.test(text)))
        expect([name, spec.keys]).toEqual([name, expect.arrayContaining(['steps', 'stepIds'])]);
    }
  });

  it('takes every user value as ARGV, never by building script text', () => {
    for (const [, spec] of scripts) expect(read(spec.file)).not.toMatch(/\bload(string)?\s*\(/);
  });
});
