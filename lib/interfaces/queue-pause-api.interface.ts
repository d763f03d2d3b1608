import type { GroupWeights, TopicLimits } from './topic-limits.interface';

/**
 * Pausing, resuming and limiting topics, and weighing their ordered groups, for every consumer,
 * in every process: part of `RedisAckQueueService`.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a `RedisAckQueueError` with a stable `code`.
 */
export interface RedisAckQueuePauseApi {
  /**
   * Pauses a topic: from the moment the promise resolves, no consumer (in any process) leases
   * a message of it, and consumers hand their prefetched messages back without counting an
   * attempt. Handlers already running finish and ack; pushes, retries and due times go on
   * (delayed messages become ready, they are just not leased). Paused consumers wait without
   * polling. The pause is kept in Redis: consumers started later take nothing either, until
   * `resume`. Pausing a paused topic changes nothing.
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * await queue.pause('order.created');
   * // ... deploy the fix; stats('order.created').paused is true meanwhile
   * await queue.resume('order.created');
   * ```
   */
  pause(topic: string): Promise<void>;

  /**
   * Resumes a paused topic: waiting consumers are woken at once and lease again. Resuming a
   * topic that is not paused changes nothing.
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  resume(topic: string): Promise<void>;

  /**
   * Replaces a topic's fleet-wide limits (see {@link TopicLimits}); `null` removes them all.
   * Kept in Redis: every consumer, in every process, obeys them from its next reserve, and
   * consumers waiting at a limit are woken. Consumers started with limit options write theirs
   * when they start (the last one written wins); consumers started without any withdraw the
   * limits declared in code before them, but not limits set here.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when a limit is out of its range, or on a partitioned topic
   *   `globalConcurrency` or `rateLimit.max` is below the partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  setLimits(topic: string, limits: TopicLimits | null): Promise<void>;
  /**
   * The fleet-wide limits a topic has now (`{}` when none).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  limits(topic: string): Promise<TopicLimits>;

  /**
   * Replaces the weights of a topic's ordered groups; `null` (or `{}`) removes them all, and
   * groups take turns round robin again. A group not named weighs 1. Kept in Redis (in every
   * partition): every consumer, in every process, uses them from each group's next turn, without
   * a restart. With every group backlogged, each group starts messages in proportion to its
   * weight; a group alone gets every start; a group that was idle comes back with no credit
   * banked. The exact guarantee, and how it meets `groupConcurrency`, `groupRateLimit`,
   * partitions and priorities: docs/ordered-groups.md, "Weighted fair share".
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @param weights - group name (as `push` takes it) -> a whole number from 1 to 1,000; at most
   *   10,000 groups.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `weights` is not a plain object (or null), a group name is
   *   not one `push` takes, a weight is not a whole number from 1 to 1,000, or there are more
   *   than 10,000 groups; nothing is changed.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * // tenant-a starts 5 messages, tenant-b 2, every other group 1, while all are backlogged
   * await queue.setGroupWeights('report.render', { 'tenant-a': 5, 'tenant-b': 2 });
   * ```
   */
  setGroupWeights(topic: string, weights: GroupWeights | null): Promise<void>;
  /**
   * The weights a topic's groups have now, as set (`{}` when none: every group weighs 1).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  groupWeights(topic: string): Promise<GroupWeights>;
}
