import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import type { QueueKeys } from './queue-keys';

type Key = keyof QueueKeys;

/**
 * Every atomic operation: its Lua file, the keys it takes (in KEYS order) and whether it
 * only reads. The order here is the order of the KEYS header of each file.
 */
export const QUEUE_SCRIPTS = {
  push: { file: 'push.lua', keys: ['messages', 'ready', 'delayed', 'wake'], refusedWhenFull: true },
  reserve: {
    file: 'reserve.lua',
    keys: ['ready', 'delayed', 'leased', 'messages', 'attempts', 'tokens', 'dead', 'deadInfo', 'sequence', 'wake'],
  },
  ack: { file: 'ack.lua', keys: ['leased', 'messages', 'attempts', 'tokens'] },
  nack: {
    file: 'nack.lua',
    keys: ['leased', 'delayed', 'ready', 'attempts', 'tokens', 'dead', 'deadInfo', 'wake', 'messages'],
  },
  release: { file: 'release.lua', keys: ['leased', 'ready', 'attempts', 'tokens', 'wake'] },
  bury: { file: 'bury.lua', keys: ['leased', 'attempts', 'tokens', 'dead', 'deadInfo', 'messages'] },
  extend: { file: 'extend.lua', keys: ['leased', 'tokens'] },
  stats: { file: 'stats.lua', keys: ['ready', 'delayed', 'leased', 'dead'], readOnly: true },
  metrics: { file: 'metrics.lua', keys: ['ready', 'delayed', 'leased', 'dead', 'messages'], readOnly: true },
  deadList: { file: 'dead-list.lua', keys: ['dead', 'deadInfo', 'messages'], readOnly: true },
  deadRequeue: { file: 'dead-requeue.lua', keys: ['dead', 'deadInfo', 'messages', 'attempts', 'ready', 'wake'] },
  deadPurge: { file: 'dead-purge.lua', keys: ['dead', 'deadInfo', 'messages', 'attempts'] },
  wake: { file: 'wake.lua', keys: ['wake'] },
  // Look-up, cancel, completed records and progress (job control).
  get: {
    file: 'get.lua',
    keys: ['delayed', 'leased', 'messages', 'attempts', 'tokens', 'dead', 'deadInfo', 'completed', 'progress'],
    readOnly: true,
  },
  list: {
    file: 'list.lua',
    keys: ['ready', 'delayed', 'leased', 'messages', 'attempts', 'tokens', 'completed'],
    readOnly: true,
  },
  cancel: {
    file: 'cancel.lua',
    keys: [
      'ready',
      'delayed',
      'leased',
      'messages',
      'attempts',
      'tokens',
      'dead',
      'deadInfo',
      'completed',
      'progress',
      'cancelled',
    ],
  },
  complete: { file: 'complete.lua', keys: ['leased', 'messages', 'attempts', 'tokens', 'completed', 'progress'] },
  progress: { file: 'progress.lua', keys: ['tokens', 'progress'] },
} satisfies Record<string, ScriptSpec>;

export type QueueScriptName = keyof typeof QUEUE_SCRIPTS;

/** Commands are defined under this prefix so nothing collides on a client the user passed in. */
const COMMAND_PREFIX = 'ackq_';
const LUA_DIR = join(__dirname, 'lua');

let sources: Map<QueueScriptName, string> | undefined;

/** The full text of a script: shebang with flags, shared prelude, then the operation. */
export function scriptSource(name: QueueScriptName): string {
  if (!sources) {
    const prelude = readFileSync(join(LUA_DIR, 'prelude.lua'), 'utf8');
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

type ScriptSpec = { file: string; keys: readonly Key[]; readOnly?: boolean; refusedWhenFull?: boolean };
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
  keys: QueueKeys,
  args: (string | number)[],
): Promise<T> {
  const spec: ScriptSpec = QUEUE_SCRIPTS[name];
  const command = (client as ScriptClient)[COMMAND_PREFIX + name] as (...a: (string | number)[]) => Promise<T>;
  return command.call(client, ...spec.keys.map((key) => keys[key]), ...args);
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
  command.call(pipeline, ...spec.keys.map((key) => keys[key]), ...args);
}
