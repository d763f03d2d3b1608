/**
 * Sealing a stored value again (a topic's `reencrypt`, see docs/codecs.md): where a stored body or
 * completed record holds sealed text (or, once the topic has a codec, plain text that would be
 * sealed today), and the same value with those parts replaced. The engine never opens sealed text:
 * the caller's `reseal` does, above it.
 */

/**
 * A sealed text (`~...`) sealed again, or plain JSON text sealed: the new sealed text, or undefined
 * to leave that part as it is (already under the current key; no codec to seal with). Throws
 * (PayloadDecodeError) when the sealed text cannot be opened.
 */
export type TextResealer = (text: string) => Promise<string | undefined>;

/** A top-level member of a JSON object text: its key and where its raw value starts and ends. */
interface Member {
  key: string;
  start: number;
  end: number;
}

/**
 * `stored` with its sealable parts passed through `reseal`, or undefined when none changed (or it
 * is of no form known here). A body: its `e`, or its plain `p` and `h` (sealed together, as push
 * seals them; `m` stays last, where reserve.lua reads it). A completed record: its kept body `b`
 * (as a body), its sealed result `s`, or its plain result `r` (sealed into `s`).
 */
export async function resealStored(stored: string, reseal: TextResealer): Promise<string | undefined> {
  if (stored.charCodeAt(0) !== 123) return resealCompact(stored, reseal);
  const members = membersOf(stored);
  if (!members) return undefined;
  const raw = (member: Member) => stored.slice(member.start, member.end);
  const find = (key: string) => members.find((member) => member.key === key);
  if (find('c') !== undefined) return resealRecord(stored, members, raw, reseal);
  const e = find('e');
  if (e) {
    const sealed = await reseal(JSON.parse(raw(e)) as string);
    return sealed === undefined ? undefined : replaced(stored, members, raw, { e: JSON.stringify(sealed) });
  }
  const p = find('p');
  if (!p) return undefined;
  const h = find('h');
  const sealed = await reseal(`{"p":${raw(p)}${h ? `,"h":${raw(h)}` : ''}}`);
  if (sealed === undefined) return undefined;
  return replaced(stored, members, raw, { p: JSON.stringify(sealed) }, { p: 'e', h: null });
}

/** A compact body, `<enqueuedAt in base 36>|<payload>`, sealed into the JSON form push writes sealed. */
async function resealCompact(stored: string, reseal: TextResealer): Promise<string | undefined> {
  const bar = stored.indexOf('|');
  if (bar <= 0 || !/^[0-9a-z]+$/.test(stored.slice(0, bar)) || bar === stored.length - 1) return undefined;
  const sealed = await reseal(`{"p":${stored.slice(bar + 1)}}`);
  if (sealed === undefined) return undefined;
  return `{"t":${parseInt(stored.slice(0, bar), 36)},"e":${JSON.stringify(sealed)}}`;
}

async function resealRecord(
  stored: string,
  members: Member[],
  raw: (member: Member) => string,
  reseal: TextResealer,
): Promise<string | undefined> {
  const values: Record<string, string> = {};
  const renames: Record<string, string> = {};
  for (const member of members) {
    if (member.key === 'b') {
      const body = JSON.parse(raw(member)) as unknown;
      if (typeof body !== 'string') continue;
      const sealed = await resealStored(body, reseal);
      if (sealed !== undefined) values.b = JSON.stringify(sealed);
    } else if (member.key === 's' || member.key === 'r') {
      const text = member.key === 's' ? (JSON.parse(raw(member)) as string) : raw(member);
      const sealed = await reseal(text);
      if (sealed === undefined) continue;
      values[member.key] = JSON.stringify(sealed);
      if (member.key === 'r') renames.r = 's';
    }
  }
  return Object.keys(values).length === 0 ? undefined : replaced(stored, members, raw, values, renames);
}

/**
 * The object rebuilt from its members in their order: a member's raw value replaced where
 * `values` has one, renamed where `renames` says (null: left out).
 */
function replaced(
  stored: string,
  members: Member[],
  raw: (member: Member) => string,
  values: Record<string, string>,
  renames: Record<string, string | null> = {},
): string {
  const parts: string[] = [];
  for (const member of members) {
    const name = member.key in renames ? renames[member.key] : member.key;
    if (name === null) continue;
    parts.push(`${JSON.stringify(name)}:${values[member.key] ?? raw(member)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The top-level members of a JSON object text, each value's raw span kept as it is (a payload's
 * number keeps every digit), or undefined when it is not one well-formed object.
 */
function membersOf(text: string): Member[] | undefined {
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  const members: Member[] = [];
  let i = 1;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const skipString = () => {
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
  };
  skipSpace();
  if (text[i] === '}') return members;
  for (;;) {
    skipSpace();
    const keyStart = i;
    skipString();
    const key = JSON.parse(text.slice(keyStart, i)) as string;
    skipSpace();
    i++; // ':'
    skipSpace();
    const start = i;
    let depth = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        skipString();
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) break;
        depth--;
      } else if (c === ',' && depth === 0) break;
      i++;
    }
    let end = i;
    while (end > start && /\s/.test(text[end - 1])) end--;
    members.push({ key, start, end });
    if (text[i] === '}') return members;
    i++; // ','
  }
}
