import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { READY_LEVEL_KEYS, type QueueKeys, type ScheduleIndexKeys } from './queue-keys';

type Key = keyof QueueKeys | keyof ScheduleIndexKeys;
/** The keys a script is given: a topic's (partition's), or the prefix-wide schedule index. */
export type ScriptKeys = QueueKeys | ScheduleIndexKeys;

/** What reserve and nack need for priorities, pause and deferrals, before the level LISTs. */
const FLOW_KEYS = ['paused', 'priority', 'deferrals', 'readyLevels'] as const;

/**
 * Every atomic operation: its Lua file, the keys it takes (in KEYS order) and whether it
 * only reads. The order here is the order of the KEYS header of each file.
 */
export const QUEUE_SCRIPTS = {
  push: {
    file: 'push.lua',
    keys: ['messages', 'ready', 'delayed', 'wake', 'paused', 'priority', 'readyLevels', ...READY_LEVEL_KEYS],
    refusedWhenFull: true,
  },
  reserve: {
    file: 'reserve.lua',
    keys: [
      'ready',
      'delayed',
      'leased',
      'messages',
      'attempts',
      'tokens',
      'dead',
      'deadInfo',
      'sequence',
      'wake',
      ...FLOW_KEYS,
      ...READY_LEVEL_KEYS,
    ],
  },
  ack: { file: 'ack.lua', keys: ['leased', 'messages', 'attempts', 'tokens', 'priority', 'deferrals'] },
  nack: {
    file: 'nack.lua',
    keys: [
      'leased',
      'delayed',
      'ready',
      'attempts',
      'tokens',
      'dead',
      'deadInfo',
      'wake',
      'messages',
      'priority',
      'deferrals',
      'readyLevels',
      ...READY_LEVEL_KEYS,
    ],
  },
  release: {
    file: 'release.lua',
    keys: ['leased', 'ready', 'attempts', 'tokens', 'wake', 'priority', 'readyLevels', ...READY_LEVEL_KEYS],
  },
  bury: {
    file: 'bury.lua',
    keys: ['leased', 'attempts', 'tokens', 'dead', 'deadInfo', 'messages', 'priority', 'deferrals'],
  },
  extend: { file: 'extend.lua', keys: ['leased', 'tokens'] },
  stats: {
    file: 'stats.lua',
    keys: ['ready', 'delayed', 'leased', 'dead', 'paused', 'readyLevels', ...READY_LEVEL_KEYS],
    readOnly: true,
  },
  metrics: {
    file: 'metrics.lua',
    keys: ['ready', 'delayed', 'leased', 'dead', 'messages', 'paused', 'readyLevels', ...READY_LEVEL_KEYS],
    readOnly: true,
  },
  deadList: { file: 'dead-list.lua', keys: ['dead', 'deadInfo', 'messages'], readOnly: true },
  deadRequeue: {
    file: 'dead-requeue.lua',
    keys: ['dead', 'deadInfo', 'messages', 'attempts', 'ready', 'wake', 'priority', 'readyLevels', ...READY_LEVEL_KEYS],
  },
  deadPurge: { file: 'dead-purge.lua', keys: ['dead', 'deadInfo', 'messages', 'attempts', 'priority'] },
  wake: { file: 'wake.lua', keys: ['wake'] },
  // Flow (pause, retry later).
  pause: { file: 'pause.lua', keys: ['paused', 'wake'] },
  defer: { file: 'defer.lua', keys: ['leased', 'delayed', 'tokens', 'deferrals', 'wake'] },
  // Schedules (lib/engine/schedule-store.ts): a topic's schedules live in its first partition.
  scheduleUpsert: {
    file: 'schedule-upsert.lua',
    keys: ['schedules', 'scheduleDue', 'scheduleLast'],
    refusedWhenFull: true,
  },
  scheduleRemove: { file: 'schedule-remove.lua', keys: ['schedules', 'scheduleDue', 'scheduleLast'] },
  scheduleList: { file: 'schedule-list.lua', keys: ['schedules', 'scheduleDue', 'scheduleLast'], readOnly: true },
  scheduleTick: {
    file: 'schedule-tick.lua',
    keys: ['schedules', 'scheduleDue', 'scheduleLast', 'messages', 'ready', 'wake'],
    refusedWhenFull: true,
  },
  scheduleIndex: { file: 'schedule-index.lua', keys: ['scheduleTopics', 'scheduleVersion'] },
} satisfies Record<string, ScriptSpec>;

export type QueueScriptName = keyof typeof QUEUE_SCRIPTS;

/** Commands are defined under this prefix so nothing collides on a client the user passed in. */
const COMMAND_PREFIX = 'ackq_';
const LUA_DIR = join(__dirname, 'lua');

let sources: Map<QueueScriptName, string> | undefined;

/** The full text of a script: shebang with flags, shared preludes (helpers, priority levels), then the operation. */
export function scriptSource(name: QueueScriptName): string {
  if (!sources) {
    const prelude = ['prelude.lua', 'prelude-levels.lua'].map((f) => readFileSync(join(LUA_DIR, f), 'utf8')).join('\n');
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
