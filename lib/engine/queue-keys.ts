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
  /** ZSET id -> completion time (ms) of completed messages kept (`keepCompleted`). */
  completed: string;
  /** HASH id -> JSON progress value of a leased message (`context.progress`). */
  progress: string;
  /** Pub/sub CHANNEL (not a key): ids of leased messages cancelled, heard by every consumer. */
  cancelled: string;
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
    completed: `${tag}:completed`,
    progress: `${tag}:progress`,
    cancelled: `${tag}:cancelled`,
  };
}
