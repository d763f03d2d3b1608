import { READY_LEVEL_KEYS, type QueueKeys, type ScheduleIndexKeys, type TopicIndexKeys } from '../keys/queue-keys';

export type Key = keyof QueueKeys | keyof ScheduleIndexKeys | keyof TopicIndexKeys;
/** The keys a script is given: a topic's (partition's), or a prefix-wide index (schedules, topics). */
export type ScriptKeys = QueueKeys | ScheduleIndexKeys | TopicIndexKeys;

/** Where a message can be and what it holds: the first keys of reserve, list and cancel. */
const MESSAGE_KEYS = ['ready', 'delayed', 'leased', 'messages', 'attempts', 'tokens'] as const;

/**
 * The helper files the loader pastes before a script's body, in dependency order: each uses only
 * those before it that it `needs` (transitively), and reads only its own `keys` and those of
 * what it needs. prelude.lua (now_ms, check_types, wake...) comes first in every script and owns
 * no keys: a script or prelude that calls one of its helpers has the keys that helper reads. A
 * script names the others it calls in `uses`; the loader passes their keys after its own.
 */
export const PRELUDES = {
  levels: { file: 'prelude-levels.lua', needs: [], keys: ['ready', ...READY_LEVEL_KEYS, 'readyLevels', 'priority'] },
  limits: { file: 'prelude-limits.lua', needs: [], keys: ['limits', 'rateLog', 'rateLast', 'held', 'leased', 'wake'] },
  quotas: {
    file: 'prelude-quotas.lua',
    needs: ['limits'],
    keys: ['groupQuotas', 'quotaLog', 'quotaHeld', 'groupWeights', 'groupActive', 'limits'],
  },
  groups: {
    file: 'prelude-groups.lua',
    needs: ['limits', 'quotas'],
    // prettier-ignore
    keys: ['groupQueue', 'groupWaiting', 'groups', 'groupCount', 'groupActive', 'groupSlots', 'groupTurns',
      'groupHeld', 'groupSequence', 'groupWeights', 'groupPasses', 'groupBlocked', 'groupBlockedAt', 'limits'],
  },
  flows: {
    file: 'prelude-flows.lua',
    needs: ['levels'],
    // prettier-ignore
    keys: ['flowParents', 'flowChildren', 'flowOpen', 'flowWaiting', 'flowUncommitted', 'flowOutbox',
      'flowOutboxDue', 'flowSequence', 'delayed', 'groupWaiting', 'deadlines', 'expiring'],
  },
  keyModes: { file: 'prelude-key-modes.lua', needs: [], keys: ['keyModes', 'keyOf', 'delayed', 'wake'] },
  extras: { file: 'prelude-extras.lua', needs: [], keys: ['deadlines', 'expiring', 'tags', 'tagIndex'] },
  receipts: { file: 'prelude-receipts.lua', needs: [], keys: ['relayReceipts'] },
  requeue: {
    file: 'prelude-requeue.lua',
    needs: [],
    keys: ['dead', 'deadInfo', 'attempts', 'messages', 'priority', 'flowOpen'],
  },
  end: {
    file: 'prelude-end.lua',
    needs: ['groups', 'flows', 'keyModes'],
    // prettier-ignore
    keys: ['messages', 'tokens', 'attempts', 'priority', 'deferrals', 'retryDue', 'progress', 'keyOf', 'leased',
      'dead', 'deadInfo', 'completed', 'counters', 'steps', 'stepIds', 'flowOpen', 'flowChildren', 'flowWaiting',
      'flowParents', 'flowUncommitted', 'groupActive', 'groupSlots', 'limits', 'keyModes', 'delayed', 'deadlines',
      'expiring', 'tags', 'tagIndex'],
  },
  preview: {
    file: 'prelude-preview.lua',
    needs: [],
    keys: ['delayed', 'messages', 'attempts', 'tokens', 'deadInfo', 'keyOf', 'tags', 'deadlines'],
  },
  filter: {
    file: 'prelude-filter.lua',
    needs: ['levels'],
    // prettier-ignore
    keys: ['tags', 'tagIndex', 'messages', 'delayed', 'leased', 'dead', 'deadInfo', 'completed', 'flowWaiting'],
  },
  cancel: {
    file: 'prelude-cancel.lua',
    needs: ['end', 'levels', 'groups', 'keyModes'],
    // prettier-ignore
    keys: [...MESSAGE_KEYS, 'dead', 'deadInfo', 'completed', 'progress', 'cancelled', 'priority', 'deferrals',
      'readyLevels', 'groupQueue', 'groupWaiting', 'flowChildren', 'flowWaiting', 'stepIds', 'keyOf'],
  },
} as const satisfies Record<string, { file: string; needs: readonly string[]; keys: readonly Key[] }>;
export const CORE_PRELUDE = 'prelude.lua';
export type PreludeName = keyof typeof PRELUDES;

/** What the loader needs of a script. */
export type ScriptSpec = {
  file: string;
  /** What the script does, in the user's words: the operation a RedisCommandError or RedisUnavailableError names. */
  operation: string;
  /** The keys its own body touches (the preludes it carries bring theirs). */
  keys: readonly Key[];
  uses?: readonly PreludeName[];
  readOnly?: boolean;
  refusedWhenFull?: boolean;
};

/**
 * Every atomic operation: its Lua file, the keys its body touches (first in KEYS, each once: the
 * script reads them as `K.<name>`), the preludes it calls into and whether it only reads. The
 * order here is the order of the `-- K.<name>` header of each file.
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
      'groupQueue',
      'groupWaiting',
      'groups',
      'groupCount',
      'groupSlots',
      'groupTurns',
      'groupHeld',
      'groupSequence',
      'limits',
      'counters',
      'flowParents',
    ],
    uses: ['groups', 'levels', 'flows', 'extras', 'receipts'],
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
      'wake',
      'paused',
      'counters',
      'cancelled',
      'keyModes',
      'keyOf',
      'throttle',
      'stepIds',
    ],
    uses: ['levels', 'keyModes', 'extras', 'receipts', 'end'],
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
      'paused',
      'readyLevels',
      'groupQueue',
      'groupWaiting',
      'groupCount',
      'groupActive',
      'groupSlots',
      'groupTurns',
      'groupHeld',
      'limits',
      'rateLog',
      'rateLast',
      'held',
      'counters',
      'retryDue',
      'stepIds',
      'deadlines',
      'expiring',
    ],
    uses: ['end', 'levels', 'groups', 'limits', 'flows'],
  },
  ack: {
    file: 'ack.lua',
    operation: 'ack',
    keys: ['leased', 'messages', 'attempts', 'tokens', 'priority', 'deferrals', 'counters', 'stepIds'],
    uses: ['end'],
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
      'retryDue',
      'stepIds',
      'deadlines',
      'expiring',
    ],
    uses: ['end', 'levels', 'limits', 'keyModes'],
  },
  release: {
    file: 'release.lua',
    operation: 'release',
    keys: ['leased', 'ready', 'attempts', 'tokens', 'wake', 'priority', 'readyLevels', 'deadlines', 'expiring'],
    uses: ['levels', 'quotas'],
  },
  bury: {
    file: 'bury.lua',
    operation: 'move a message to the dead letters',
    keys: ['leased', 'attempts', 'tokens', 'dead', 'deadInfo', 'messages', 'priority', 'deferrals', 'stepIds'],
    uses: ['end', 'keyModes'],
  },
  extend: { file: 'extend.lua', operation: 'extend a lease', keys: ['leased', 'tokens'] },
  stats: {
    file: 'stats.lua',
    operation: 'read stats',
    keys: ['ready', 'delayed', 'leased', 'dead', 'paused', 'readyLevels', 'groupQueue', 'groupCount', 'flowWaiting'],
    uses: ['levels'],
    readOnly: true,
  },
  historyRecord: {
    file: 'history-record.lua',
    operation: 'record history',
    keys: ['history', 'groupUsage', 'groupUsageOpen'],
  },
  historyRead: { file: 'history-read.lua', operation: 'read history', keys: ['history'], readOnly: true },
  // The scaling signal (lib/engine/stores/scaling-store.ts), in a topic's home slot.
  scalingSet: { file: 'scaling-set.lua', operation: 'set the scaling target', keys: ['scaling'] },
  scalingRead: {
    file: 'scaling-read.lua',
    operation: 'read the scaling signal',
    keys: ['scaling', 'history', 'counters', 'delayed', 'leased', 'groupQueue', 'groupCount'],
    uses: ['levels'],
  },
  groupUsageRead: {
    file: 'group-usage-read.lua',
    operation: 'read usage per group',
    keys: ['groupUsage', 'groupUsageOpen'],
    readOnly: true,
  },
  metrics: {
    file: 'metrics.lua',
    operation: 'read gauges',
    keys: [
      'ready',
      'delayed',
      'leased',
      'dead',
      'messages',
      'paused',
      'readyLevels',
      'completed',
      'groupQueue',
      'groupCount',
      'counters',
      'flowWaiting',
    ],
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
    keys: ['dead', 'deadInfo', 'messages', 'attempts', 'ready', 'wake', 'priority', 'readyLevels', 'flowOpen'],
    uses: ['levels', 'requeue'],
  },
  deadPurge: {
    file: 'dead-purge.lua',
    operation: 'purge dead letters',
    keys: ['dead', 'deadInfo', 'messages', 'attempts', 'priority', 'stepIds'],
    uses: ['end'],
  },
  wake: { file: 'wake.lua', operation: 'wake consumers', keys: ['wake'] },
  // Pause, retry later, fleet-wide limits and group weights.
  pause: { file: 'pause.lua', operation: 'pause or resume', keys: ['paused', 'wake'] },
  defer: {
    file: 'defer.lua',
    operation: 'retry later',
    keys: [
      'leased',
      'delayed',
      'tokens',
      'deferrals',
      'wake',
      'groupActive',
      'groupTurns',
      'groupHeld',
      'held',
      'retryDue',
      'deadlines',
      'expiring',
    ],
    uses: ['limits', 'keyModes', 'quotas'],
  },
  limitsSet: {
    file: 'limits-set.lua',
    operation: 'set limits',
    keys: ['limits', 'wake', 'rateLog', 'rateLast', 'rateWindows', 'groupWeights', 'groupQuotas'],
  },
  limitsGet: { file: 'limits-get.lua', operation: 'read limits', keys: ['limits'], readOnly: true },
  groupWeightsSet: {
    file: 'group-weights-set.lua',
    operation: 'set group weights',
    keys: ['groupWeights', 'groupPasses', 'groupTurns', 'groupSequence', 'limits', 'groupBlocked', 'groupBlockedAt'],
  },
  groupWeightsGet: {
    file: 'group-weights-get.lua',
    operation: 'read group weights',
    keys: ['groupWeights'],
    readOnly: true,
  },
  groupQuotasSet: {
    file: 'group-quotas-set.lua',
    operation: 'set group quotas',
    keys: ['groupQuotas', 'limits', 'quotaLog', 'quotaHeld', 'groupHeld', 'wake'],
  },
  groupQuotasGet: {
    file: 'group-quotas-get.lua',
    operation: 'read group quotas',
    keys: ['groupQuotas'],
    readOnly: true,
  },
  // Schedules (lib/engine/stores/schedule-store.ts): a topic's schedules live in its first partition.
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
    keys: [
      'schedules',
      'scheduleDue',
      'scheduleLast',
      'messages',
      'ready',
      'wake',
      'counters',
      'deadlines',
      'expiring',
    ],
    refusedWhenFull: true,
  },
  scheduleRun: {
    file: 'schedule-run.lua',
    operation: 'run a schedule',
    keys: ['schedules', 'messages', 'ready', 'wake', 'counters', 'deadlines', 'expiring'],
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
      'tags',
      'deadlines',
    ],
    readOnly: true,
  },
  list: {
    file: 'list.lua',
    operation: 'list messages',
    keys: ['ready', 'delayed', 'leased', 'dead', 'completed', 'readyLevels', 'flowWaiting'],
    uses: ['levels', 'preview'],
    readOnly: true,
  },
  listRows: {
    file: 'list-rows.lua',
    operation: 'list messages',
    keys: ['delayed', 'leased', 'dead', 'completed', 'flowWaiting'],
    uses: ['preview'],
    readOnly: true,
  },
  listOrder: {
    file: 'list-order.lua',
    operation: 'list messages',
    keys: ['ready', 'delayed', 'leased', 'messages', 'completed', 'dead', 'readyLevels', 'flowWaiting'],
    uses: ['levels', 'preview'],
    readOnly: true,
  },
  filterPage: {
    file: 'filter-page.lua',
    operation: 'list messages',
    // prettier-ignore
    keys: ['ready', 'delayed', 'leased', 'dead', 'deadInfo', 'completed', 'messages', 'tags', 'readyLevels',
      'flowWaiting'],
    uses: ['filter'],
    readOnly: true,
  },
  cancel: { file: 'cancel.lua', operation: 'cancel a message', keys: [], uses: ['cancel'] },
  complete: {
    file: 'complete.lua',
    operation: 'complete a message',
    keys: [
      'leased',
      'messages',
      'attempts',
      'tokens',
      'completed',
      'progress',
      'priority',
      'deferrals',
      'counters',
      'stepIds',
    ],
    uses: ['end', 'keyModes'],
  },
  progress: { file: 'progress.lua', operation: 'report progress', keys: ['tokens', 'progress'] },
  reply: { file: 'reply.lua', operation: 'reply to a request', keys: ['tokens', 'replies'], refusedWhenFull: true },
  // Durable steps (context.step): stored fenced by the lease, read as a delivery's first step runs.
  step: { file: 'step.lua', operation: 'store a step', keys: ['tokens', 'steps', 'stepIds'], refusedWhenFull: true },
  stepsRead: { file: 'steps-read.lua', operation: 'read steps', keys: ['tokens', 'steps'], readOnly: true },
  // Flows (lib/engine/stores/flow-trees.ts): a parent waits in its slot for children in other slots.
  flowCommit: {
    file: 'flow-commit.lua',
    operation: 'push a flow',
    keys: [
      'delayed',
      'wake',
      'paused',
      'flowParents',
      'flowUncommitted',
      'flowWaiting',
      'ready',
      'priority',
      'readyLevels',
    ],
    uses: ['flows'],
  },
  flowNotify: {
    file: 'flow-notify.lua',
    operation: 'end a flow child',
    keys: ['delayed', 'wake', 'paused', 'dead', 'deadInfo', 'flowChildren', 'flowWaiting'],
    uses: ['end', 'flows'],
  },
  flowResume: {
    file: 'flow-resume.lua',
    operation: 'requeue dead letters',
    keys: ['dead', 'deadInfo', 'attempts', 'delayed', 'flowChildren', 'flowWaiting', 'wake', 'paused'],
    uses: ['flows'],
  },
  flowClear: { file: 'flow-clear.lua', operation: 'end a flow child', keys: [], uses: ['flows'] },
  flowSweep: {
    file: 'flow-sweep.lua',
    operation: 'repair flows',
    keys: ['flowOutbox', 'flowOutboxDue', 'flowUncommitted', 'flowParents'],
  },
  // Bulk actions (lib/engine/stores/bulk-store.ts): a record in the topic's first partition, a
  // snapshot and progress in each partition.
  bulkSelect: {
    file: 'bulk-select.lua',
    operation: 'start a bulk action',
    keys: ['bulk', 'bulkIds'],
    uses: ['filter'],
  },
  bulkRecord: { file: 'bulk-record.lua', operation: 'run a bulk action', keys: ['bulk'] },
  bulkStep: {
    file: 'bulk-step.lua',
    operation: 'run a bulk action',
    // prettier-ignore
    keys: ['bulk', 'bulkIds', 'dead', 'completed', 'flowOpen', 'flowWaiting', 'wake', 'counters', 'groupCount'],
    uses: ['cancel', 'end', 'levels', 'groups', 'extras', 'requeue'],
  },
  bulkAbort: { file: 'bulk-abort.lua', operation: 'abort a bulk action', keys: ['bulk', 'bulkIds'] },
  // Topic registry (lib/engine/stores/topic-registry.ts): one prefix-wide SET.
  topicAdd: { file: 'topic-add.lua', operation: 'register a topic', keys: ['topicIndex'] },
  topicForget: { file: 'topic-forget.lua', operation: 'forget a topic', keys: ['topicIndex'] },
  topicList: { file: 'topic-list.lua', operation: 'list topics', keys: ['topicIndex'], readOnly: true },
  // Relay receipts (the outbox relay's, recorded by push.lua and push-keyed.lua): forgotten after its commit.
  receiptsForget: { file: 'receipts-forget.lua', operation: 'forget relay receipts', keys: ['relayReceipts'] },
} satisfies Record<string, ScriptSpec>;
