/**
 * The prefix as every key, tag and channel spells it. Topics and prefixes may both hold ':', so
 * prefix `p` with topic `q:t` and prefix `p:q` with topic `t` would share `{p:q:t}`: a prefix
 * with ':' has it escaped as `%3A` (and `%` as `%25`, so the mapping stays one to one), leaving the
 * first ':' of a tag as the only separator. A prefix without ':' is spelled as it is (the key
 * layout of earlier versions, kept).
 */
export function prefixInKeys(prefix: string): string {
  return prefix.includes(':') ? prefix.replace(/%/g, '%25').replace(/:/g, '%3A') : prefix;
}

/**
 * STRING in a topic's home slot (its plain tag) holding its partition count, so producers
 * and consumers configured with different counts fail instead of missing each other.
 */
export function partitionCountKey(prefix: string, topic: string): string {
  return `{${prefix}:${topic}}:partitions`;
}

/**
 * The keys of one topic (of one partition of a partitioned topic). All share the hash tag `{<prefix>:<topic>}`, so every script
 * touches a single slot and the queue runs on Redis Cluster unchanged.
 */
export interface QueueKeys {
  /** LIST of ids waiting, head first. */
  ready: string;
  /** ZSET id -> due time (ms). */
  delayed: string;
  /** ZSET id -> lease deadline (ms). */
  leased: string;
  /** HASH id -> stored body. */
  messages: string;
  /** HASH id -> deliveries whose lease ended without an ack; a live lease's own is in its token. */
  attempts: string;
  /** HASH id -> token of the current lease, `<sequence>.<attempt>`. */
  tokens: string;
  /** ZSET id -> time of death (ms). */
  dead: string;
  /** HASH id -> JSON reason of death. */
  deadInfo: string;
  /** STRING counter that makes lease tokens unique. */
  sequence: string;
  /** LIST holding at most one wake-up token for blocked consumers. */
  wake: string;
  // Priorities, pause, retry later.
  /** STRING present while the topic (this partition) is paused: reserve leases nothing. */
  paused: string;
  /** HASH id -> priority level 1-9, of messages pushed with one (level 0 has no entry). */
  priority: string;
  /** HASH id -> deferrals so far (`retryLater` without an attempt). */
  deferrals: string;
  /** HASH id -> when its next delivery became due (ms): set as a lease ends for a retry, dropped when it is leased. */
  retryDue: string;
  /** HASH `pushed` / `acked` -> messages stored / acked so far: what the dashboard's rates come from. */
  counters: string;
  /** ZSET level -> level: the levels 1-9 whose ready LIST holds ids (empty: only level 0 is used). */
  readyLevels: string;
  /** LISTs of ids ready at priority 1 to 9, head first (`ready` is level 0). */
  ready1: string;
  ready2: string;
  ready3: string;
  ready4: string;
  ready5: string;
  ready6: string;
  ready7: string;
  ready8: string;
  ready9: string;
  /** HASH schedule name -> its definition (JSON); used in a topic's first partition only. */
  schedules: string;
  /** ZSET schedule name -> its next tick (ms, server clock). */
  scheduleDue: string;
  /** HASH schedule name -> its last tick that pushed a message (ms). */
  scheduleLast: string;
  /** ZSET id -> completion time (ms) of completed messages kept (`keepCompleted`). */
  completed: string;
  /** HASH id -> JSON progress value of a leased message (`context.progress`). */
  progress: string;
  /**
   * Not a key: the prefix of each message's HASH `<steps><id>` of durable steps
   * (`context.step`): step name -> result JSON ('' for undefined). Passed so scripts name the slot.
   */
  steps: string;
  /** SET of the ids that have durable steps: removing a message of a topic without any costs one EXISTS. */
  stepIds: string;
  // Start-by deadlines and tags (lua/prelude-extras.lua; deleted by lua/prelude-end.lua).
  /**
   * HASH id -> its start-by deadline (ms, server clock), `<ms>` (it becomes a dead letter) or
   * `<ms>:drop`, while it lives and is not dead (a dead letter keeps none: a requeue runs it).
   */
  deadlines: string;
  /** ZSET id -> start-by deadline (ms), of messages with one that wait for a start: the sweep's index. */
  expiring: string;
  /** HASH id -> its tags joined by NUL, while it lives (dead or completed included). */
  tags: string;
  /**
   * Not a key: the prefix of each tag's ZSET `<tagIndex><tag>` (id -> push time, ms), the
   * messages holding that tag. Passed so scripts name the slot.
   */
  tagIndex: string;
  // Ordered groups (lua/prelude-groups.lua) and fleet-wide limits (lua/prelude-limits.lua).
  /**
   * ZSET, scores 0, of earlier versions: grouped messages waiting, as `<group>\0<sequence>\0<id>`.
   * Only drained now (its members move into their group's ZSET as their group is served).
   */
  groupQueue: string;
  /**
   * HASH id -> `<group>\0<sequence>\0<id>`, of a delayed grouped message until it is due (its
   * place in its group); earlier versions kept it for waiting ones too, until their first start.
   */
  groupWaiting: string;
  /**
   * Not a key: the prefix of each group's ZSET `<groups><group>` (id -> push sequence), its
   * messages waiting for their first start, oldest first. Passed so scripts name the slot.
   */
  groups: string;
  /** STRING: how many grouped messages wait in the groups' ZSETs (what stats counts as ready). */
  groupCount: string;
  /** HASH id -> group, of started grouped messages until acked, dead or cancelled. */
  groupActive: string;
  /** HASH group -> its started messages not yet ended (at most groupConcurrency). */
  groupSlots: string;
  /** ZSET group -> turn: the groups that can start a message now, lowest turn first. */
  groupTurns: string;
  /** ZSET group -> ms until which its rate limit holds it. */
  groupHeld: string;
  /** STRING counter of the groups' message order and turns. */
  groupSequence: string;
  /** HASH of the fleet-wide limits (c, rm, rw, gm, gw, gc). */
  limits: string;
  /**
   * ZSET, scores 0: the starts in the current rate window of the topic ('') and of each group,
   * as `<field>\0<start ms>\0<started before>\0<started after>` (see lua/prelude-limits.lua).
   */
  rateLog: string;
  /** ZSET '' (the topic) or group -> ms of its last start in rateLog (so quiet ones are dropped). */
  rateLast: string;
  /** HASH of the fixed rate windows of earlier versions (no longer read): setLimits deletes it. */
  rateWindows: string;
  /** STRING present, with a TTL, while `rateLimited` holds the topic. */
  held: string;
  /** HASH group -> weight of its fair share (setGroupWeights; a group not in it weighs 1). */
  groupWeights: string;
  /**
   * HASH 'q' (the default) or 'q<group>' -> its quota, '<max> <perMs> <scaleByWeight 1|2|0> <handlerMs>'
   * (setGroupQuotas); beside them, so that a start reads all in one command, 'g<group>' -> the
   * group's quota state, '<running> <sum of their starts>|<starts>|<handler time>' (each window
   * '<before> <last t> <last total> <n>;t:total,...' or 'L<last ms>' when in quotaLog), and
   * 'i<id>' -> '<start ms>\0<group>' for each delivery running under a handler budget (see
   * lua/prelude-quotas.lua).
   */
  groupQuotas: string;
  /**
   * ZSET, scores 0: a rate log (as rateLog) of the group quotas' windows too long for groupQuotas:
   * 's<group>' the group's starts, 'h<group>' the handler time of its ended deliveries.
   */
  quotaLog: string;
  /** ZSET group -> the end of the hold (in groupHeld) its quota gave it. */
  quotaHeld: string;
  /** ZSET '' -> the virtual clock of weighted turns, group -> the turn its next one starts from. */
  groupPasses: string;
  /** ZSET group -> its next weighted turn, while its slots are full and messages wait in it. */
  groupBlocked: string;
  /** HASH group -> ms since it is in groupBlocked (a hold lapses after a lease). */
  groupBlockedAt: string;
  /** Pub/sub CHANNEL (not a key): ids of leased messages cancelled, heard by every consumer. */
  cancelled: string;
  /**
   * Not a key: the prefix of each request's reply, a STRING `<replies><id>` with a TTL
   * (reply.lua; the Nest transport's request-reply).
   */
  replies: string;
  /**
   * HASH minute % 1500 -> that minute's record (counts, wait and handling histograms): the
   * topic's history, kept in its first partition only (see history-format.ts).
   */
  history: string;
  /**
   * HASH of the topic's scaling target (setScalingTarget) and its signal's state: the smoothed
   * count, since when the computed one is lower, the last handling time and the arrival samples
   * (see lua/scaling-read.lua); in the topic's home slot, whatever its partition count.
   */
  scaling: string;
  /**
   * HASH minute % 1500 -> that minute's counts per group (handled, retried, dead, handler ms), and
   * `open` -> the minutes still counted in groupUsageOpen: the topic's usage per group, beside its
   * history (see group-usage-format.ts).
   */
  groupUsage: string;
  /** Not a key: the prefix of each open minute's HASH `<groupUsageOpen><minute>`, group -> its counts so far. */
  groupUsageOpen: string;
  // Flows (lua/prelude-flows.lua): parents that wait for their children.
  /**
   * HASH child id -> JSON `[parent topic, parent id, parent partition, 'f' | 'c' (onChildFailure), root
   * topic, root id, root partition, delayMs, availableAt]`, while the child lives (a dead one keeps it).
   */
  flowParents: string;
  /**
   * Not a key: the prefix of each parent's HASH `<flowChildren><id>`: `#` children not ended, `!`
   * children dead that fail it, `@` its `delayMs availableAt`, and one field per child,
   * `["<topic>","<id>",<partition>]` -> `p` (pending) or `<seq>\n<outcome><policy>\n<result or failure>`.
   */
  flowChildren: string;
  /** SET of the parents whose children's HASH exists (dropped with it when the parent ends). */
  flowOpen: string;
  /** ZSET parent id -> since when it waits for its children (state `waiting-children`). */
  flowWaiting: string;
  /** ZSET id -> time stored, of the nodes of a flow whose root is not stored yet (pushFlow under way). */
  flowUncommitted: string;
  /** HASH child id -> `<seq>\n<outcome>\n<parent ref>\n<result or failure>`: an end its parent has not heard yet. */
  flowOutbox: string;
  /** ZSET child id -> when its outbox entry was written (the sweep passes on old ones). */
  flowOutboxDue: string;
  /** STRING counter that orders the outbox entries of one child (a later end wins). */
  flowSequence: string;
  // Key modes (lua/prelude-key-modes.lua): debounce, throttle and supersede by key.
  /**
   * HASH `d<key>` -> `<pending id>\0<first push ms>` (debounce), `s<key>` -> `<running id>\0<pending
   * id>\0<its due ms>\0<cancelled id still draining>\0<until ms>` (supersede), while the key has a live message.
   */
  keyModes: string;
  /** HASH id -> its mode (`d`, `t`, `c` or `k`) and key, of every keyed message until it ends. */
  keyOf: string;
  /**
   * Not a key: the prefix of each throttled key's window, a STRING `<throttle><key>` =
   * `<id>\0<window end ms>` that expires as the window ends. Passed so scripts name the slot.
   */
  throttle: string;
  // Bulk actions (lib/engine/stores/bulk-store.ts).
  /**
   * Not a key: the prefix of each bulk action's HASH `<bulk><bulkId>`: in every partition it
   * selected in, `n` selected, `p` processed, `s` skipped there; in the topic's first partition
   * also the action's record (action, state, createdAt, maxPerSecond, partitions, where it
   * stands, runner and lease). Passed so scripts name the slot.
   */
  bulk: string;
  /** Not a key: the prefix of each bulk action's snapshot, a ZSET `<bulkIds><bulkId>` of the ids it has yet to act on. */
  bulkIds: string;
  // The outbox relay (lua/prelude-receipts.lua).
  /**
   * ZSET receipt -> ms recorded: the receipts of the outbox rows pushed into this partition and
   * not yet forgotten by the relay (after its database commit); a push carrying one held here
   * changes nothing. Pruned after 7 days.
   */
  relayReceipts: string;
}

/** The names of the ready LISTs of priority levels 1-9, in level order. */
export const READY_LEVEL_KEYS = [
  'ready1',
  'ready2',
  'ready3',
  'ready4',
  'ready5',
  'ready6',
  'ready7',
  'ready8',
  'ready9',
] as const;

export function queueKeys(prefix: string, topic: string): QueueKeys {
  return tagKeys(`${prefix}:${topic}`);
}

/** The keys of one partition, by its hash tag (see partitionTags). */
export function tagKeys(hashTag: string): QueueKeys {
  const tag = `{${hashTag}}`;
  return {
    ready: `${tag}:ready`,
    delayed: `${tag}:delayed`,
    leased: `${tag}:leased`,
    messages: `${tag}:messages`,
    attempts: `${tag}:attempts`,
    tokens: `${tag}:tokens`,
    dead: `${tag}:dead`,
    deadInfo: `${tag}:dead-info`,
    sequence: `${tag}:sequence`,
    wake: `${tag}:wake`,
    // Priorities, pause, retry later.
    paused: `${tag}:paused`,
    priority: `${tag}:priority`,
    deferrals: `${tag}:deferrals`,
    retryDue: `${tag}:retry-due`,
    counters: `${tag}:counters`,
    readyLevels: `${tag}:ready-levels`,
    ready1: `${tag}:ready:1`,
    ready2: `${tag}:ready:2`,
    ready3: `${tag}:ready:3`,
    ready4: `${tag}:ready:4`,
    ready5: `${tag}:ready:5`,
    ready6: `${tag}:ready:6`,
    ready7: `${tag}:ready:7`,
    ready8: `${tag}:ready:8`,
    ready9: `${tag}:ready:9`,
    schedules: `${tag}:schedules`,
    scheduleDue: `${tag}:schedule-due`,
    scheduleLast: `${tag}:schedule-last`,
    completed: `${tag}:completed`,
    progress: `${tag}:progress`,
    steps: `${tag}:steps:`,
    stepIds: `${tag}:step-ids`,
    deadlines: `${tag}:deadlines`,
    expiring: `${tag}:expiring`,
    tags: `${tag}:tags`,
    tagIndex: `${tag}:tag:`,
    groupQueue: `${tag}:group-queue`,
    groupWaiting: `${tag}:group-waiting`,
    groups: `${tag}:group:`,
    groupCount: `${tag}:group-count`,
    groupActive: `${tag}:group-active`,
    groupSlots: `${tag}:group-slots`,
    groupTurns: `${tag}:group-turns`,
    groupHeld: `${tag}:group-held`,
    groupSequence: `${tag}:group-sequence`,
    limits: `${tag}:limits`,
    rateLog: `${tag}:rate-log`,
    rateLast: `${tag}:rate-last`,
    rateWindows: `${tag}:rate-windows`,
    held: `${tag}:held`,
    groupWeights: `${tag}:group-weights`,
    groupQuotas: `${tag}:group-quotas`,
    quotaLog: `${tag}:quota-log`,
    quotaHeld: `${tag}:quota-held`,
    groupPasses: `${tag}:group-passes`,
    groupBlocked: `${tag}:group-blocked`,
    groupBlockedAt: `${tag}:group-blocked-at`,
    cancelled: `${tag}:cancelled`,
    replies: `${tag}:reply:`,
    history: `${tag}:history`,
    scaling: `${tag}:scaling`,
    groupUsage: `${tag}:group-usage`,
    groupUsageOpen: `${tag}:group-usage:`,
    flowParents: `${tag}:flow-parent`,
    flowChildren: `${tag}:flow:`,
    flowOpen: `${tag}:flow-open`,
    flowWaiting: `${tag}:flow-waiting`,
    flowUncommitted: `${tag}:flow-uncommitted`,
    flowOutbox: `${tag}:flow-outbox`,
    flowOutboxDue: `${tag}:flow-outbox-due`,
    flowSequence: `${tag}:flow-sequence`,
    keyModes: `${tag}:keys`,
    keyOf: `${tag}:key-of`,
    throttle: `${tag}:throttle:`,
    bulk: `${tag}:bulk:`,
    bulkIds: `${tag}:bulk-ids:`,
    relayReceipts: `${tag}:relay-receipts`,
  };
}

/**
 * The prefix-wide keys of schedules, in a slot of their own (the tag `{<prefix>:}` is no
 * topic's): which topics have schedules, and a counter every change of a schedule bumps.
 */
export interface ScheduleIndexKeys {
  /** SET of the topics that have (or recently had) schedules. */
  scheduleTopics: string;
  /** STRING counter bumped by every upsert and removal, so schedulers reload. */
  scheduleVersion: string;
}

export function scheduleIndexKeys(prefix: string): ScheduleIndexKeys {
  // Tag `{<prefix>:}`: never a topic's (names are not empty), and inside `~{<prefix>:*` of the
  // documented ACL user, as every other key of the queue.
  const tag = `{${prefix}:}`;
  return { scheduleTopics: `${tag}:schedule-topics`, scheduleVersion: `${tag}:schedule-version` };
}

/**
 * The prefix-wide registry of topics, in the same slot of its own as the schedule index (tag
 * `{<prefix>:}`), so listing topics never needs SCAN, on Cluster too.
 */
export interface TopicIndexKeys {
  /** SET of the topics a service pushed to or consumed (until forgotten). */
  topicIndex: string;
}

export function topicIndexKeys(prefix: string): TopicIndexKeys {
  return { topicIndex: `{${prefix}:}:topics` };
}

/**
 * STRING in the prefix's slot of its own (tag `{<prefix>:}`, beside the topic registry) holding
 * a random token, written when a service connects: found missing or changed on a reconnect, it
 * says Redis lost this prefix's data meanwhile (see DataMarker).
 */
export function dataMarkerKey(prefix: string): string {
  return `{${prefix}:}:data-marker`;
}

/**
 * STRING in the prefix's slot of its own: the form push stores plain messages in, 'json' or
 * 'compact' (see StoredFormat).
 */
export function storedFormatKey(prefix: string): string {
  return `{${prefix}:}:stored-format`;
}

/**
 * STRING counter in the prefix's slot of its own: INCR issues each service the number that
 * starts the ids it makes (see MessageIds).
 */
export function idPrefixCounterKey(prefix: string): string {
  return `{${prefix}:}:id-prefixes`;
}

/**
 * STREAM of the prefix's fleet-wide events (the `fleetEvents` option), capped by XADD MAXLEN ~.
 * A slot of its own: the tag `{<prefix>:#events}` is no topic's ('#' is not a topic character),
 * so its writes spread away from the topics and the prefix-wide registry, on Cluster too.
 */
export function fleetEventsKey(prefix: string): string {
  return `{${prefix}:#events}`;
}

/**
 * The prefix-wide index of bulk actions, in the prefix's slot of its own (tag `{<prefix>:}`):
 * every bulk action's topic by id (what `bulkStatus(id)` reads), and the ids still running (what
 * the runners poll).
 */
export interface BulkIndexKeys {
  /** HASH bulk id -> its topic. */
  bulkIndex: string;
  /** SET of the ids of bulk actions not yet done or aborted. */
  bulkRunning: string;
  /**
   * SET of the ids of those only a runner with the topic's codec may run (reencrypt), apart from
   * bulkRunning: a runner of an earlier release, which polls only that one, never takes them.
   */
  bulkRunningCodec: string;
}

export function bulkIndexKeys(prefix: string): BulkIndexKeys {
  return {
    bulkIndex: `{${prefix}:}:bulks`,
    bulkRunning: `{${prefix}:}:bulks-running`,
    bulkRunningCodec: `{${prefix}:}:bulks-running-codec`,
  };
}
