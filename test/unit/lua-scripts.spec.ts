import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUEUE_SCRIPTS, scriptSource } from '../../lib/engine/queue-scripts';

const LUA_DIR = join(__dirname, '../../lib/engine/lua');

describe('Lua scripts', () => {
  it.each(Object.entries(QUEUE_SCRIPTS))(
    '%s: the header names the keys it is registered with, in order',
    (_name, spec) => {
      const text = readFileSync(join(LUA_DIR, spec.file), 'utf8');
      const header = [...text.matchAll(/^-- KEYS\[(\d+)\]\s+(\w+)/gm)].map((m) => [Number(m[1]), m[2]]);
      expect(header.map(([index]) => index)).toEqual(spec.keys.map((_, i) => i + 1));
      expect(header.map(([, key]) => key)).toEqual([...spec.keys]);
    },
  );

  it.each(Object.entries(QUEUE_SCRIPTS))(
    '%s: touches keys only through KEYS and describes its ARGV and returns',
    (name, spec) => {
      const text = readFileSync(join(LUA_DIR, spec.file), 'utf8');
      expect(text).toMatch(/^-- ARGV/m);
      expect(text).toMatch(/^-- Returns/m);
      // Every redis.call names its key through a local alias of KEYS, never a built string.
      for (const call of text.matchAll(/redis\.call\('(\w+)', ([^,)]+)/g)) {
        if (call[1] === 'TIME') continue;
        expect(call[2]).toMatch(/^K_[A-Z_]+$|^key$|^wake_key$/);
      }
      const flags = spec as { readOnly?: boolean; refusedWhenFull?: boolean };
      const shebang = flags.readOnly
        ? /^#!lua flags=no-writes\n/
        : flags.refusedWhenFull
          ? /^#!lua\n/
          : /^#!lua flags=allow-oom\n/;
      expect(scriptSource(name as keyof typeof QUEUE_SCRIPTS)).toMatch(shebang);
    },
  );

  it('takes every user value as ARGV, never by building script text', () => {
    for (const spec of Object.values(QUEUE_SCRIPTS)) {
      const text = readFileSync(join(LUA_DIR, spec.file), 'utf8');
      expect(text).not.toMatch(/\bload(string)?\s*\(/);
    }
  });
});
