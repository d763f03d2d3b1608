import type { GroupQuotas, GroupUsage, GroupUsageOptions, ScalingReport, ScalingTarget } from './fleet.interface';

/**
 * Running a fleet: the scaling signal of a topic, quotas for its ordered groups and what each
 * group used: part of `RedisAckQueueService`.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a `RedisAckQueueError` with a stable `code`.
 */
export interface RedisAckQueueFleetApi {
  /**
   * Sets (or with `null` removes) the topic's scaling target, kept in Redis: from then on
   * `scaling(topic)`, the `redis_ack_queue_desired_consumers` gauge, the KEDA endpoint, the CLI and
   * the dashboard answer how many consumers the topic needs (docs/scaling.md).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `target` is not a plain object of the fields of
   *   {@link ScalingTarget} within their ranges (or null); nothing is changed.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * await queue.setScalingTarget('report.render', { targetWaitMs: 2_000, maxConsumers: 40, concurrency: 10 });
   * ```
   */
  setScalingTarget(topic: string, target: ScalingTarget | null): Promise<void>;

  /**
   * The topic's scaling signal now (`null` when it has no scaling target): one script call (one
   * more per partition of a partitioned topic, to count its backlog).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  scaling(topic: string): Promise<ScalingReport | null>;

  /**
   * Replaces the quotas of a topic's ordered groups; `null` (or `{}`) removes them. Kept in Redis
   * (in every partition): every consumer, in every process, obeys them from its next reserve. A
   * group over its quota waits (no attempt counted) while the others go on (docs/group-quotas.md).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when `quotas` is not a plain object of `default` and `groups`
   *   (or null), a group name is not one `push` takes, a quota is not a plain object of the fields
   *   of {@link GroupQuota} within their ranges, or there are more than 10,000 groups; nothing is
   *   changed.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   * @example
   * ```ts
   * // every tenant at most 50 starts a second times its weight, and 10 s of handler time a minute
   * await queue.setGroupQuotas('report.render', { default: { max: 50, perMs: 1_000, scaleByWeight: true } });
   * await queue.setGroupQuotas('report.render', { groups: { 'tenant-x': { max: 600, perMs: 60_000, handlerMs: 10_000 } } });
   * ```
   */
  setGroupQuotas(topic: string, quotas: GroupQuotas | null): Promise<void>;

  /**
   * The quotas a topic's groups have now, as set (`{}` when none).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {PartitionCountMismatchError} when Redis holds the topic with another partition count.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  groupQuotas(topic: string): Promise<GroupQuotas>;

  /**
   * What the topic's groups used, minute by minute, over a range of the last 25 hours: the top
   * groups by handler time (docs/group-usage.md).
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {InvalidOptionError} when an option is not a number in its range; nothing is read.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under a queue key.
   */
  groupUsage(topic: string, options?: GroupUsageOptions | null): Promise<GroupUsage>;
}
