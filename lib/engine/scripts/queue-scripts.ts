import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import type { QueueKeys } from '../keys/queue-keys';
import {
  CORE_PRELUDE,
  PRELUDES,
  QUEUE_SCRIPTS,
  type Key,
  type PreludeName,
  type ScriptKeys,
  type ScriptSpec,
} from './script-table';

export { CORE_PRELUDE, PRELUDES, QUEUE_SCRIPTS, type ScriptKeys } from './script-table';

export type QueueScriptName = keyof typeof QUEUE_SCRIPTS;

/** Commands are defined under this prefix so nothing collides on a client the user passed in. */
const COMMAND_PREFIX = 'ackq_';
const LUA_DIR = join(__dirname, 'lua');

let sources: Map<QueueScriptName, string> | undefined;
let keyOrders: Map<QueueScriptName, Key[]> | undefined;

/** Each script's KEYS order (scriptKeysOf), worked out once. */
function keyLists(): Map<QueueScriptName, Key[]> {
  keyOrders ??= new Map(
    (Object.entries(QUEUE_SCRIPTS) as [QueueScriptName, ScriptSpec][]).map(([name, spec]) => [
      name,
      scriptKeysOf(spec),
    ]),
  );
  return keyOrders;
}

/** The preludes a script uses with those they need, in PRELUDES order (each after what it needs). */
export function preludesOf(spec: Pick<ScriptSpec, 'uses'>): PreludeName[] {
  const wanted = new Set<PreludeName>();
  const add = (name: PreludeName): void => {
    wanted.add(name);
    PRELUDES[name].needs.forEach(add);
  };
  spec.uses?.forEach(add);
  return (Object.keys(PRELUDES) as PreludeName[]).filter((name) => wanted.has(name));
}

/**
 * Every key a script is given, in KEYS order: its own (those its body touches), then those of the
 * preludes it carries, each once.
 */
export function scriptKeysOf(spec: Pick<ScriptSpec, 'keys' | 'uses'>): Key[] {
  const keys = new Set<Key>(spec.keys);
  for (const prelude of preludesOf(spec)) for (const key of PRELUDES[prelude].keys as readonly Key[]) keys.add(key);
  return [...keys];
}

/**
 * The full text of a script: shebang with flags, `K` naming its keys, the core prelude and the
 * preludes it uses, then the operation. `K` is a few table stores per call, so helpers and body
 * read `K.ready`, never a KEYS offset.
 */
export function scriptSource(name: QueueScriptName): string {
  if (!sources) {
    const read = (file: string) => readFileSync(join(LUA_DIR, file), 'utf8');
    const core = read(CORE_PRELUDE);
    const preludes = new Map((Object.keys(PRELUDES) as PreludeName[]).map((p) => [p, read(PRELUDES[p].file)]));
    sources = new Map();
    for (const [scriptName, spec] of Object.entries(QUEUE_SCRIPTS) as [QueueScriptName, ScriptSpec][]) {
      // Read-only scripts also run on a replica. Every script but push runs when Redis is
      // out of memory: consuming, acking and purging are how a full queue drains itself.
      const shebang = spec.readOnly
        ? '#!lua flags=no-writes'
        : spec.refusedWhenFull
          ? '#!lua'
          : '#!lua flags=allow-oom';
      const keys = `local K = { ${scriptKeysOf(spec)
        .map((key, i) => `${key} = KEYS[${i + 1}]`)
        .join(', ')} }`;
      const parts = [shebang, keys, core, ...preludesOf(spec).map((p) => preludes.get(p)!), read(spec.file)];
      sources.set(scriptName, parts.join('\n'));
    }
  }
  return sources.get(name)!;
}

type ScriptClient = (Redis | Cluster) & Record<string, unknown>;

/** Defines every script once on a client (ioredis then calls them by SHA, loading on NOSCRIPT). */
export function defineQueueScripts(client: Redis | Cluster): void {
  const target = client as ScriptClient;
  for (const name of Object.keys(QUEUE_SCRIPTS) as QueueScriptName[]) {
    if (typeof target[COMMAND_PREFIX + name] === 'function') continue;
    client.defineCommand(COMMAND_PREFIX + name, {
      numberOfKeys: keyLists().get(name)!.length,
      lua: scriptSource(name),
    });
  }
}

/** How ioredis keeps a defined script (its `scriptsSet`, marked internal): called directly, it skips auto-pipelining. */
interface DefinedScript {
  execute(client: Redis | Cluster, args: (string | number)[], options: { replyEncoding: 'utf8' }): Promise<unknown>;
}

/**
 * Runs one script with the topic's keys in KEYS order (scriptKeysOf). `direct`: written to the
 * socket now rather than on auto-pipelining's next check phase (see sendCommand).
 */
export function runQueueScript<T>(
  client: Redis | Cluster,
  name: QueueScriptName,
  keys: ScriptKeys,
  args: (string | number)[],
  direct = false,
): Promise<T> {
  const named = keys as Partial<Record<Key, string>>;
  const argv = [
    ...keyLists()
      .get(name)!
      .map((key) => named[key]!),
    ...args,
  ];
  const script = direct
    ? (client.scriptsSet as Record<string, DefinedScript | undefined>)[COMMAND_PREFIX + name]
    : undefined;
  if (script) return script.execute(client, argv, { replyEncoding: 'utf8' }) as Promise<T>;
  const command = (client as ScriptClient)[COMMAND_PREFIX + name] as (...a: (string | number)[]) => Promise<T>;
  return command.call(client, ...argv);
}

/** Queues one script call on a pipeline (replicated pushes end theirs with WAIT). */
export function addQueueScript(
  pipeline: ChainableCommander,
  name: QueueScriptName,
  keys: QueueKeys,
  args: (string | number)[],
): void {
  const command = (pipeline as unknown as Record<string, (...a: (string | number)[]) => unknown>)[
    COMMAND_PREFIX + name
  ];
  const named = keys as Partial<Record<Key, string>>;
  command.call(
    pipeline,
    ...keyLists()
      .get(name)!
      .map((key) => named[key]!),
    ...args,
  );
}
