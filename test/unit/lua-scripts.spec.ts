import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOW_HELD, KEY_PARKED } from '../../lib/engine/codecs/sentinel-scores';
import {
  CORE_PRELUDE,
  PRELUDES,
  QUEUE_SCRIPTS,
  preludesOf,
  scriptKeysOf,
  scriptSource,
  type QueueScriptName,
} from '../../lib/engine/scripts/queue-scripts';
import type { Key, PreludeName, ScriptSpec } from '../../lib/engine/scripts/script-table';

const LUA_DIR = join(__dirname, '../../lib/engine/scripts/lua');
const read = (file: string) => readFileSync(join(LUA_DIR, file), 'utf8');
const scripts = Object.entries(QUEUE_SCRIPTS) as [QueueScriptName, ScriptSpec][];
const preludeNames = Object.keys(PRELUDES) as PreludeName[];

/** Lua code without its comments. */
const uncommented = (text: string) => text.replace(/--.*$/gm, '');

/** Lua code without its comments and string literals: what names it really uses. */
const code = (text: string) => uncommented(text).replace(/'(?:[^'\\]|\\.)*'/g, "''");

/** The top-level names a prelude defines: its local functions and local state. */
const definedIn = (text: string) =>
  [...text.matchAll(/^local (?:function (\w+)|([\w, ]+?)\s*(?:=|$))/gm)].flatMap((m) =>
    m[1] ? [m[1]] : m[2].split(',').map((name) => name.trim()),
  );

/** The names of `defined` that `text` uses (not as a table field). */
const uses = (text: string, defined: string[]) =>
  defined.filter((name) => new RegExp(`(?<![.\\w])${name}\\b`).test(code(text)));

/** The core prelude's helpers, each with the keys it reads (itself or through another helper). */
const coreHelpers = (() => {
  const parts = code(read(CORE_PRELUDE))
    .split(/^(?=local function )/m)
    .slice(1);
  const direct = new Map(
    parts.map((part) => [
      part.match(/^local function (\w+)/)![1],
      { text: part, keys: new Set([...part.matchAll(/\bK\.(\w+)/g)].map((m) => m[1])) },
    ]),
  );
  for (const [, helper] of direct)
    for (const [other, { keys }] of direct)
      if (new RegExp(`(?<![.\\w])${other}\\(`).test(helper.text)) keys.forEach((key) => helper.keys.add(key));
  return direct;
})();

/**
 * The keys a text reads: `K.<name>`, a level's LIST through `K['ready' .. level]`, and the keys of
 * the core helpers it calls (the core prelude owns no keys).
 */
const keysRead = (text: string) => {
  const plain = code(text);
  const keys = new Set([...plain.matchAll(/\bK\.(\w+)/g)].map((m) => m[1]));
  if (/\bK\['ready' \.\./.test(text)) for (let level = 1; level <= 9; level++) keys.add(`ready${level}`);
  for (const [name, helper] of coreHelpers)
    if (new RegExp(`(?<![.\\w])${name}\\(`).test(plain)) helper.keys.forEach((key) => keys.add(key));
  return keys;
};

/** The keys of a prelude and of those it needs. */
const preludeKeys = (names: readonly PreludeName[]) =>
  new Set(names.flatMap((p) => PRELUDES[p].keys as readonly Key[]));

describe('Lua scripts', () => {
  it.each(scripts)("%s: the header names exactly the script's own keys, in order, each once", (_name, spec) => {
    // Key descriptions live once, in queue-keys.ts; a header only names the keys, `-- K.a K.b ...`.
    const header = read(spec.file)
      .split('\n')
      .filter((line) => line.startsWith('-- K.'))
      .flatMap((line) => [...line.matchAll(/\bK\.(\w+)/g)].map((m) => m[1]));
    expect(header).toEqual([...spec.keys]);
    expect(new Set(spec.keys).size).toBe(spec.keys.length);
  });

  it.each(scripts)(
    '%s: reads only its own keys and those of the preludes it carries, and uses every key it declares',
    (_name, spec) => {
      const text = read(spec.file);
      expect(code(text)).not.toMatch(/KEYS\[/);
      const body = keysRead(text);
      const allowed = new Set([...spec.keys, ...preludeKeys(preludesOf(spec))]);
      expect([...body].filter((key) => !allowed.has(key as Key))).toEqual([]);
      expect(spec.keys.filter((key) => !body.has(key))).toEqual([]);
    },
  );

  it.each(scripts)('%s: is given every key once, its own first', (_name, spec) => {
    const keys = scriptKeysOf(spec);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.slice(0, spec.keys.length)).toEqual([...spec.keys]);
    expect(new Set(keys)).toEqual(new Set([...spec.keys, ...preludeKeys(preludesOf(spec))]));
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
    expect(line).toBe(
      `local K = { ${scriptKeysOf(spec)
        .map((key, i) => `${key} = KEYS[${i + 1}]`)
        .join(', ')} }`,
    );
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

  it('keeps the preludes free of key offsets; each reads only its keys and those of what it needs, and uses each of its own', () => {
    expect(code(read(CORE_PRELUDE))).not.toMatch(/KEYS\[/);
    for (const prelude of preludeNames) {
      const text = read(PRELUDES[prelude].file);
      expect(code(text)).not.toMatch(/KEYS\[/);
      const own: readonly Key[] = PRELUDES[prelude].keys;
      const allowed = new Set([...own, ...preludeKeys(preludesOf({ uses: PRELUDES[prelude].needs }))]);
      const body = keysRead(text);
      expect([prelude, [...body].filter((key) => !allowed.has(key as Key))]).toEqual([prelude, []]);
      expect([prelude, own.filter((key) => !body.has(key))]).toEqual([prelude, []]);
      expect(new Set(own).size).toBe(own.length);
    }
  });

  it('spells the sentinel scores of K.delayed as sentinel-scores.ts does', () => {
    const text = read(CORE_PRELUDE);
    expect(text).toContain(`local FLOW_HELD = '${FLOW_HELD}'`);
    expect(text).toContain(`local KEY_PARKED = '${KEY_PARKED}'`);
    for (const file of readdirSync(LUA_DIR).filter((name) => name !== CORE_PRELUDE))
      expect([file, read(file)]).not.toEqual([
        file,
        expect.stringMatching(/^local (FLOW_HELD|KEY_PARKED)\b|900719925474099\d/m),
      ]);
  });

  // One end of a message. A message's per-message state is what it holds beside where it waits:
  // PER_MESSAGE below (body, lease token, attempts, progress, priority, deferrals, retry due, dead
  // reason, group slot, key, flow links and outbox, durable steps, start-by deadline, tags). Deleting any of it (HDEL, DEL,
  // SREM, ZREM, ZREMRANGEBY*, or push_ids('HDEL', ...) naming K.<key>, or DEL of a key built from the
  // K.steps or K.flowChildren prefix) is an end, and only prelude-end.lua does it, for every way a
  // message ends (acked, completed, cancelled, dead, purged). The exceptions below are transitions
  // that keep the message alive (a lease ends and it waits again, a dead letter comes back, a
  // waiting level changes, a flow's root is stored, a parent heard its child), each named with why.
  // Where a message waits (ready, delayed, leased, dead, completed, its group's ZSET) is the
  // script's that moves it. A new kind of per-message state joins PER_MESSAGE and prelude-end.lua.
  const PER_MESSAGE = [
    'messages',
    'tokens',
    'attempts',
    'progress',
    'priority',
    'deferrals',
    'retryDue',
    'deadInfo',
    'groupActive',
    'keyOf',
    'flowParents',
    'flowOpen',
    'flowWaiting',
    'flowUncommitted',
    'flowOutbox',
    'flowOutboxDue',
    'stepIds',
    'deadlines',
    'expiring',
    'tags',
  ];
  const ALIVE: Record<string, string[]> = {
    // A lease ends and the message waits again (released, deferred, retried, expired); nack ends
    // it before it knows whether the message lives on (a death goes through message_dead).
    'release.lua': ['tokens'],
    'defer.lua': ['tokens'],
    'nack.lua': ['tokens'],
    // Expired leases go back to ready; a retry's due time is read as it is leased again; a flow
    // parent whose start-by deadline passed while it waited for its children stops waiting as it
    // ends; a message that starts leaves the deadline sweep's index (its deadline stays for a retry).
    'reserve.lua': ['tokens', 'retryDue', 'flowWaiting', 'expiring'],
    // A dead letter comes back (requeued; a parent whose failed children were requeued).
    'prelude-requeue.lua': ['deadInfo', 'attempts', 'priority'],
    'flow-resume.lua': ['deadInfo', 'attempts'],
    'flow-notify.lua': ['deadInfo', 'flowWaiting'],
    // A flow's root is stored; a parent heard its child's end.
    'flow-commit.lua': ['flowUncommitted'],
    'flow-sweep.lua': ['flowUncommitted'],
    // (outbox_heard: flow-clear.lua, or flow-notify.lua where the child shares its parent's slot).
    'prelude-flows.lua': ['flowOutbox', 'flowOutboxDue'],
    // A waiting keyed message takes a new level.
    'push-keyed.lua': ['priority'],
    // A drained (superseded or cancelled) message had ended already: its key's entry goes as its handler returns.
    'prelude-key-modes.lua': ['keyOf'],
    // Progress left by an earlier version's ends, picked at random and dropped when its lease is gone.
    'progress.lua': ['progress'],
  };
  const END = PRELUDES.end.file;

  it('deletes per-message state only in the end prelude, but for transitions that keep a message alive', () => {
    const deletion =
      /redis\.call\('(?:HDEL|DEL|UNLINK|SREM|ZREM|ZREMRANGEBYRANK|ZREMRANGEBYSCORE|ZREMRANGEBYLEX)', K\.(\w+)|push_ids\('(?:HDEL|ZREM)', K\.(\w+)/g;
    const files = readdirSync(LUA_DIR).filter((file) => file.endsWith('.lua') && file !== END);
    const found: string[] = [];
    for (const file of files) {
      const text = uncommented(read(file));
      for (const m of text.matchAll(deletion)) {
        const key = m[1] ?? m[2];
        if (PER_MESSAGE.includes(key) && !(ALIVE[file] ?? []).includes(key)) found.push(`${file}: ${key}`);
      }
      // A message's own HASHes (steps, a parent's children) are built from a prefix: only the end deletes them.
      if (/K\.(?:steps|flowChildren) \.\./.test(text) && /redis\.call\('(?:DEL|UNLINK)'/.test(text))
        found.push(`${file}: DEL`);
    }
    expect(found).toEqual([]);
    // And every exception is still needed, so the list stays what the code does.
    for (const [file, keys] of Object.entries(ALIVE)) {
      const deleted = [...uncommented(read(file)).matchAll(deletion)].map((m) => m[1] ?? m[2]);
      expect([file, keys.filter((key) => !deleted.includes(key))]).toEqual([file, []]);
    }
  });

  it('deletes in the end prelude every kind of per-message state', () => {
    const text = uncommented(read(END));
    for (const key of PER_MESSAGE.filter((key) => !['flowOutbox', 'flowOutboxDue'].includes(key)))
      expect([
        key,
        new RegExp(`'(?:HDEL|SREM|ZREM)', K\\.${key}\\b|push_ids\\('(?:HDEL|ZREM)', K\\.${key}\\b`).test(text),
      ]).toEqual([key, true]);
    expect(text).toMatch(/K\.steps \.\./);
    expect(text).toMatch(/K\.flowChildren \.\./);
  });

  it('takes every user value as ARGV, never by building script text', () => {
    for (const [, spec] of scripts) expect(read(spec.file)).not.toMatch(/\bload(string)?\s*\(/);
  });
});
