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
  /** HASH schedule name -> its definition (JSON); used in a topic's first partition only. */
  schedules: string;
  /** ZSET schedule name -> its next tick (ms, server clock). */
  scheduleDue: string;
  /** HASH schedule name -> its last tick that pushed a message (ms). */
  scheduleLast: string;
}

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
    schedules: `${tag}:schedules`,
    scheduleDue: `${tag}:schedule-due`,
    scheduleLast: `${tag}:schedule-last`,
  };
}

/**
 * The prefix-wide keys of schedules, in a slot of their own (the tag `{<prefix>}` is no
 * topic's): which topics have schedules, and a counter every change of a schedule bumps.
 */
export interface ScheduleIndexKeys {
  /** SET of the topics that have (or recently had) schedules. */
  scheduleTopics: string;
  /** STRING counter bumped by every upsert and removal, so schedulers reload. */
  scheduleVersion: string;
}

export function scheduleIndexKeys(prefix: string): ScheduleIndexKeys {
  return { scheduleTopics: `{${prefix}}:schedule-topics`, scheduleVersion: `{${prefix}}:schedule-version` };
}
