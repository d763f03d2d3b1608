import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import type { QueueKeys } from './queue-keys';
import { QUEUE_SCRIPTS, type Key, type ScriptKeys, type ScriptSpec } from './script-table';

export { QUEUE_SCRIPTS, type ScriptKeys } from './script-table';

export type QueueScriptName = keyof typeof QUEUE_SCRIPTS;

/** Commands are defined under this prefix so nothing collides on a client the user passed in. */
const COMMAND_PREFIX = 'ackq_';
const LUA_DIR = join(__dirname, 'lua');

let sources: Map<QueueScriptName, string> | undefined;

/** The full text of a script: shebang with flags, shared preludes (helpers, groups and limits, priority levels), then the operation. */
export function scriptSource(name: QueueScriptName): string {
  if (!sources) {
    const prelude = ['prelude.lua', 'prelude-flow.lua', 'prelude-levels.lua']
      .map((f) => readFileSync(join(LUA_DIR, f), 'utf8'))
      .join('\n');
    sources = new Map();
    for (const [scriptName, spec] of Object.entries(QUEUE_SCRIPTS) as [QueueScriptName, ScriptSpec][]) {
      // Read-only scripts also run on a replica. Every script but push runs when Redis is
      // out of memory: consuming, acking and purging are how a full queue drains itself.
      const shebang = spec.readOnly
        ? '#!lua flags=no-writes'
        : spec.refusedWhenFull
          ? '#!lua'
          : '#!lua flags=allow-oom';
      sources.set(scriptName, `${shebang}\n${prelude}\n${readFileSync(join(LUA_DIR, spec.file), 'utf8')}`);
    }
  }
  return sources.get(name)!;
}

type ScriptClient = (Redis | Cluster) & Record<string, unknown>;

/** Defines every script once on a client (ioredis then calls them by SHA, loading on NOSCRIPT). */
export function defineQueueScripts(client: Redis | Cluster): void {
  const target = client as ScriptClient;
  for (const [name, spec] of Object.entries(QUEUE_SCRIPTS) as [QueueScriptName, ScriptSpec][]) {
    if (typeof target[COMMAND_PREFIX + name] === 'function') continue;
    client.defineCommand(COMMAND_PREFIX + name, { numberOfKeys: spec.keys.length, lua: scriptSource(name) });
  }
}

/** Runs one script with the topic's keys in the order its header names them. */
export function runQueueScript<T>(
  client: Redis | Cluster,
  name: QueueScriptName,
  keys: ScriptKeys,
  args: (string | number)[],
): Promise<T> {
  const spec: ScriptSpec = QUEUE_SCRIPTS[name];
  const command = (client as ScriptClient)[COMMAND_PREFIX + name] as (...a: (string | number)[]) => Promise<T>;
  const named = keys as Partial<Record<Key, string>>;
  return command.call(client, ...spec.keys.map((key) => named[key]!), ...args);
}

/** Queues one script call on a pipeline (replicated pushes end theirs with WAIT). */
export function addQueueScript(
  pipeline: ChainableCommander,
  name: QueueScriptName,
  keys: QueueKeys,
  args: (string | number)[],
): void {
  const spec: ScriptSpec = QUEUE_SCRIPTS[name];
  const command = (pipeline as unknown as Record<string, (...a: (string | number)[]) => unknown>)[
    COMMAND_PREFIX + name
  ];
  const named = keys as Partial<Record<Key, string>>;
  command.call(pipeline, ...spec.keys.map((key) => named[key]!), ...args);
}
