import {
  FLOW_CONTROL_KEYS,
  FLOW_TREE_KEYS,
  KEY_MODE_KEYS,
  READY_LEVEL_KEYS,
  type QueueKeys,
  type ScheduleIndexKeys,
  type TopicIndexKeys,
} from '../keys/queue-keys';

export type Key = keyof QueueKeys | keyof ScheduleIndexKeys | keyof TopicIndexKeys;
/** The keys a script is given: a topic's (partition's), or a prefix-wide index (schedules, topics). */
export type ScriptKeys = QueueKeys | ScheduleIndexKeys | TopicIndexKeys;

/** Where a message can be and what it holds: the first keys of reserve, list and cancel. */
const MESSAGE_KEYS = ['ready', 'delayed', 'leased', 'messages', 'attempts', 'tokens'] as const;

/** What stats and metrics count first. */
const COUNT_KEYS = ['ready', 'delayed', 'leased', 'dead'] as const;

/** What reserve and nack need for priorities, pause and deferrals, before the level LISTs. */
const FLOW_KEYS = ['paused', 'priority', 'deferrals', 'readyLevels'] as const;

/**
 * The helper files the loader pastes before a script's body, in dependency order: each uses only
 * those before it that it `needs` (transitively). prelude.lua (now_ms, check_types, wake...) comes
 * first in every script; a script names the others it calls in `uses`.
 */
export const PRELUDES = {
  flow: { file: 'prelude-flow.lua', needs: [] },
  levels: { file: 'prelude-levels.lua', needs: [] },
  tree: { file: 'prelude-tree.lua', needs: ['levels'] },
  keys: { file: 'prelude-keys.lua', needs: [] },
  settle: { file: 'prelude-settle.lua', needs: ['flow', 'tree', 'keys'] },
  preview: { file: 'prelude-preview.lua', needs: [] },
} as const satisfies Record<string, { file: string; needs: readonly string[] }>;
export const CORE_PRELUDE = 'prelude.lua';
export type PreludeName = keyof typeof PRELUDES;

/** What the loader needs of a script. */
export type ScriptSpec = {
  file: string;
  /** What the script does, in the user's words: the operation a RedisCommandError or RedisUnavailableError names. */
  operation: string;
  keys: readonly Key[];
  uses?: readonly PreludeName[];
  readOnly?: boolean;
  refusedWhenFull?: boolean;
};

/**
 * Every atomic operation: its Lua file, the keys it takes (in KEYS order, each once: the script
 * reads them as `K.<name>`), the preludes it calls into and whether it only reads. The order
 * here is the order of the `-- K.<name>` header of each file.
 */
export const QUEUE_SCRIPTS = {
  push: {
    file: 'push.lua',
    operation: 'push',
    keys: [
      'messages',
      'ready',
      'delayed',
      'wake',
      'paused',
      'priority',
      'readyLevels',
      ...READY_LEVEL_KEYS,
      ...FLOW_CONTROL_KEYS,
      'counters',
      'flowParents',
      'flowChildren',
      'flowOpen',
      'flowWaiting',
      'flowUncommitted',
    ],
    uses: ['flow', 'levels', 'tree'],
    refusedWhenFull: true,
  },
  pushKeyed: {
    file: 'push-keyed.lua',
    operation: 'push',
    keys: [
      'messages',
      'ready',
      'delayed',
      'leased',
      'tokens',
      'attempts',
      'deferrals',
      'retryDue',
      'progress',
      'priority',
      'readyLevels',
      ...READY_LEVEL_KEYS,
      'wake',
      'paused',
      'counters',
      'cancelled',
      ...KEY_MODE_KEYS,
      'steps',
      'stepIds',
    ],
    uses: ['levels', 'keys'],
    refusedWhenFull: true,
  },
  reserve: {
    file: 'reserve.lua',
    operation: 'reserve',
    keys: [
      ...MESSAGE_KEYS,
      'dead',
      'deadInfo',
      'sequence',
      'wake',
      ...FLOW_KEYS,
      ...READY_LEVEL_KEYS,
      ...FLOW_CONTROL_KEYS,
      'counters',
      'retryDue',
      ...FLOW_TREE_KEYS,
      'steps',
      'stepIds',
      'keys',
      'keyOf',
    ],
    uses: ['settle', 'levels'],
  },
  ack: {
    file: 'ack.lua',
    operation: 'ack',
    // prettier-ignore
    keys: ['leased', 'messages', 'attempts', 'tokens', 'priority', 'deferrals', ...FLOW_CONTROL_KEYS, 'wake',
      'counters', 'retryDue', ...FLOW_TREE_KEYS, 'steps', 'stepIds', 'delayed', 'keys', 'keyOf'],
    uses: ['settle'],
  },
  nack: {
    file: 'nack.lua',
    operation: 'nack',
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
      ...FLOW_CONTROL_KEYS,
      'retryDue',
      ...FLOW_TREE_KEYS,
      'steps',
      'stepIds',
      'keys',
      'keyOf',
    ],
    uses: ['settle', 'levels'],
  },
  release: {
    file: 'release.lua',
    operation: 'release',
    keys: ['leased', 'ready', 'attempts', 'tokens', 'wake', 'priority', 'readyLevels', ...READY_LEVEL_KEYS],
    uses: ['levels'],
  },
  bury: {
    file: 'bury.lua',
    operation: 'move a message to the dead letters',
    keys: [
      'leased',
      'attempts',
      'tokens',
      'dead',
      'deadInfo',
      'messages',
      'priority',
      'deferrals',
      ...FLOW_CONTROL_KEYS,
      'wake',
      ...FLOW_TREE_KEYS,
      'steps',
      'stepIds',
      'delayed',
      'keys',
      'keyOf',
    ],
    uses: ['settle'],
  },
  extend: { file: 'extend.lua', operation: 'extend a lease', keys: ['leased', 'tokens'] },
  stats: {
    file: 'stats.lua',
    operation: 'read stats',
    keys: [...COUNT_KEYS, 'paused', 'readyLevels', ...READY_LEVEL_KEYS, 'groupQueue', 'groupCount', 'flowWaiting'],
    uses: ['levels'],
    readOnly: true,
  },
  historyRecord: { file: 'history-record.lua', operation: 'record history', keys: ['history'] },
  historyRead: { file: 'history-read.lua', operation: 'read history', keys: ['history'], readOnly: true },
  metrics: {
    file: 'metrics.lua',
    operation: 'read gauges',
    // prettier-ignore
    keys: [...COUNT_KEYS, 'messages', 'paused', 'readyLevels', ...READY_LEVEL_KEYS, 'completed', 'groupQueue',
      'groupCount', 'counters', 'flowWaiting'],
    uses: ['levels'],
    readOnly: true,
  },
  deadList: {
    file: 'dead-list.lua',
    operation: 'read dead letters',
    keys: ['dead', 'deadInfo', 'messages'],
    uses: ['preview'],
    readOnly: true,
  },
  deadRequeue: {
    file: 'dead-requeue.lua',
    operation: 'requeue dead letters',
    // prettier-ignore
    keys: ['dead', 'deadInfo', 'messages', 'attempts', 'ready', 'wake', 'priority', 'readyLevels', ...READY_LEVEL_KEYS,
      'flowOpen'],
    uses: ['levels'],
  },
  deadPurge: {
    file: 'dead-purge.lua',
    operation: 'purge dead letters',
    keys: ['dead', 'deadInfo', 'messages', 'attempts', 'priority', ...FLOW_TREE_KEYS, 'steps', 'stepIds'],
    uses: ['tree'],
  },
  wake: { file: 'wake.lua', operation: 'wake consumers', keys: ['wake'] },
  // Flow (pause, retry later, fleet-wide limits).
  pause: { file: 'pause.lua', operation: 'pause or resume', keys: ['paused', 'wake'] },
  defer: {
    file: 'defer.lua',
    operation: 'retry later',
    keys: ['leased', 'delayed', 'tokens', 'deferrals', 'wake', ...FLOW_CONTROL_KEYS, 'retryDue', 'keys', 'keyOf'],
    uses: ['flow', 'keys'],
  },
  limitsSet: {
    file: 'limits-set.lua',
    operation: 'set limits',
    keys: ['limits', 'wake', 'rateLog', 'rateLast', 'rateWindows', 'groupWeights'],
  },
  limitsGet: { file: 'limits-get.lua', operation: 'read limits', keys: ['limits'], readOnly: true },
  groupWeightsSet: {
    file: 'group-weights-set.lua',
    operation: 'set group weights',
    keys: ['groupWeights', 'groupPasses', 'groupTurns', 'groupSequence', 'limits'],
  },
  groupWeightsGet: {
    file: 'group-weights-get.lua',
    operation: 'read group weights',
    keys: ['groupWeights'],
    readOnly: true,
  },
  // Schedules (lib/engine/schedule-store.ts): a topic's schedules live in its first partition.
  scheduleUpsert: {
    file: 'schedule-upsert.lua',
    operation: 'upsert a schedule',
    keys: ['schedules', 'scheduleDue', 'scheduleLast'],
    refusedWhenFull: true,
  },
  scheduleRemove: {
    file: 'schedule-remove.lua',
    operation: 'remove a schedule',
    keys: ['schedules', 'scheduleDue', 'scheduleLast'],
  },
  scheduleList: {
    file: 'schedule-list.lua',
    operation: 'list schedules',
    keys: ['schedules', 'scheduleDue', 'scheduleLast'],
    readOnly: true,
  },
  scheduleTick: {
    file: 'schedule-tick.lua',
    operation: 'run a schedule tick',
    keys: ['schedules', 'scheduleDue', 'scheduleLast', 'messages', 'ready', 'wake', 'counters'],
    refusedWhenFull: true,
  },
  scheduleRun: {
    file: 'schedule-run.lua',
    operation: 'run a schedule',
    keys: ['schedules', 'messages', 'ready', 'wake', 'counters'],
    refusedWhenFull: true,
  },
  scheduleIndex: {
    file: 'schedule-index.lua',
    operation: 'index schedules',
    keys: ['scheduleTopics', 'scheduleVersion'],
  },
  // Look-up, cancel, completed records and progress (job control).
  get: {
    file: 'get.lua',
    operation: 'get a message',
    keys: [
      'delayed',
      'leased',
      'messages',
      'attempts',
      'tokens',
      'dead',
      'deadInfo',
      'completed',
      'progress',
      'priority',
      'steps',
      'flowParents',
      'flowChildren',
      'flowWaiting',
      'keyOf',
    ],
    readOnly: true,
  },
  list: {
    file: 'list.lua',
    operation: 'list messages',
    keys: [...MESSAGE_KEYS, 'completed', 'readyLevels', ...READY_LEVEL_KEYS, 'flowWaiting', 'keyOf'],
    uses: ['levels', 'preview', 'tree'],
    readOnly: true,
  },
  listOrder: {
    file: 'list-order.lua',
    operation: 'list messages',
    // prettier-ignore
    keys: ['ready', 'delayed', 'leased', 'messages', 'completed', 'dead', 'readyLevels', ...READY_LEVEL_KEYS,
      'flowWaiting'],
    uses: ['levels', 'tree'],
    readOnly: true,
  },
  cancel: {
    file: 'cancel.lua',
    operation: 'cancel a message',
    keys: [
      ...MESSAGE_KEYS,
      'dead',
      'deadInfo',
      'completed',
      'progress',
      'cancelled',
      'priority',
      'deferrals',
      'readyLevels',
      ...READY_LEVEL_KEYS,
      ...FLOW_CONTROL_KEYS,
      'wake',
      'retryDue',
      ...FLOW_TREE_KEYS,
      'steps',
      'stepIds',
      'keys',
      'keyOf',
    ],
    uses: ['flow', 'levels', 'tree', 'keys'],
  },
  complete: {
    file: 'complete.lua',
    operation: 'complete a message',
    // prettier-ignore
    keys: ['leased', 'messages', 'attempts', 'tokens', 'completed', 'progress', 'priority', 'deferrals',
      ...FLOW_CONTROL_KEYS, 'wake', 'counters', 'retryDue', ...FLOW_TREE_KEYS, 'steps', 'stepIds', 'delayed',
      'keys', 'keyOf'],
    uses: ['flow', 'tree', 'keys'],
  },
  progress: { file: 'progress.lua', operation: 'report progress', keys: ['tokens', 'progress'] },
  reply: { file: 'reply.lua', operation: 'reply to a request', keys: ['tokens', 'replies'], refusedWhenFull: true },
  // Durable steps (context.step): stored fenced by the lease, read as a delivery's first step runs.
  step: { file: 'step.lua', operation: 'store a step', keys: ['tokens', 'steps', 'stepIds'], refusedWhenFull: true },
  stepsRead: { file: 'steps-read.lua', operation: 'read steps', keys: ['tokens', 'steps'], readOnly: true },
  // Flows (lib/engine/flow-trees.ts): a parent waits in its slot for children in other slots.
  flowCommit: {
    file: 'flow-commit.lua',
    operation: 'push a flow',
    // prettier-ignore
    keys: ['delayed', 'wake', 'paused', 'flowParents', 'flowUncommitted', 'flowWaiting', 'ready', 'priority',
      'readyLevels', ...READY_LEVEL_KEYS, 'groupWaiting'],
    uses: ['tree'],
  },
  flowNotify: {
    file: 'flow-notify.lua',
    operation: 'end a flow child',
    // prettier-ignore
    keys: ['delayed', 'wake', 'paused', 'messages', 'dead', 'deadInfo', 'deferrals', 'priority',
      ...FLOW_TREE_KEYS, 'ready', 'readyLevels', ...READY_LEVEL_KEYS, 'groupWaiting', 'steps', 'stepIds'],
    uses: ['settle'],
  },
  flowResume: {
    file: 'flow-resume.lua',
    operation: 'requeue dead letters',
    // prettier-ignore
    keys: ['dead', 'deadInfo', 'attempts', 'delayed', 'flowChildren', 'flowWaiting', 'wake', 'paused', 'ready',
      'priority', 'readyLevels', ...READY_LEVEL_KEYS, 'groupWaiting'],
    uses: ['tree'],
  },
  flowClear: { file: 'flow-clear.lua', operation: 'end a flow child', keys: ['flowOutbox', 'flowOutboxDue'] },
  flowSweep: {
    file: 'flow-sweep.lua',
    operation: 'repair flows',
    keys: ['flowOutbox', 'flowOutboxDue', 'flowUncommitted', 'flowParents'],
  },
  // Topic registry (lib/engine/topic-registry.ts): one prefix-wide SET.
  topicAdd: { file: 'topic-add.lua', operation: 'register a topic', keys: ['topicIndex'] },
  topicForget: { file: 'topic-forget.lua', operation: 'forget a topic', keys: ['topicIndex'] },
  topicList: { file: 'topic-list.lua', operation: 'list topics', keys: ['topicIndex'], readOnly: true },
} satisfies Record<string, ScriptSpec>;
