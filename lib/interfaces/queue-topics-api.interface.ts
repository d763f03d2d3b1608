/**
 * The registry of topics under the service's prefix: part of `RedisAckQueueService`. A
 * service records a topic the first time it pushes to it, reserves from it or consumes it
 * (once per topic per service instance: no extra command per message), in one Redis SET of
 * its own slot (`{<prefix>:}:topics`), so listing needs no SCAN, on Cluster too.
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a `RedisAckQueueError` with a stable `code`.
 */
export interface RedisAckQueueTopicsApi {
  /**
   * The topics registered under the prefix, sorted. A topic only used by services of an
   * older version, or forgotten, is not listed.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under the registry's key.
   * @example
   * ```ts
   * for (const topic of await queue.topics()) console.log(topic, await queue.stats(topic));
   * ```
   */
  topics(): Promise<string[]>;

  /**
   * Removes a topic from the registry, and only from it: its messages, dead letters, pause
   * flag and schedules stay in Redis. A service that pushes to (or consumes) the topic later
   * without having recorded it yet, this one included, registers it again.
   * @param topic - 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @returns true when the topic was registered, false otherwise.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidTopicError} when `topic` is not 1-200 characters of `A-Z a-z 0-9 . _ - :`.
   * @throws {RedisUnavailableError | RedisCommandError | QueueKeyTypeError} when Redis cannot be
   *   reached, refuses the call, or holds a foreign value under the registry's key.
   */
  forgetTopic(topic: string): Promise<boolean>;

  /**
   * The form push stores messages without headers, group or maxAttempts in, for every service of
   * the prefix: `'compact'` or `'json'` (see {@link RedisAckQueueStoredFormat}). `'json'` when no
   * service chose one yet.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {RedisUnavailableError | RedisCommandError} when Redis cannot be reached or refuses the call.
   */
  storedFormat(): Promise<RedisAckQueueStoredFormat>;

  /**
   * Sets the prefix's stored format: after a rolling deploy from an older release, `'compact'`
   * once no process of that release runs any more (they cannot read it: see docs/upgrading.md).
   * This service writes it at once; the others from their next connect or reconnect (until then
   * they write JSON, which every release reads).
   * @param format - `'compact'` or `'json'`.
   * @throws {QueueClosedError} when the service is closed (or closing).
   * @throws {InvalidOptionError} when `format` is neither.
   * @throws {RedisUnavailableError | RedisCommandError} when Redis cannot be reached or refuses the call.
   * @example
   * ```ts
   * // Every process of the previous release has stopped:
   * await queue.setStoredFormat('compact');
   * ```
   */
  setStoredFormat(format: RedisAckQueueStoredFormat): Promise<void>;
}

/**
 * How push stores a message that has no headers, group or maxAttempts: `'compact'`
 * (`<enqueuedAt in base 36>|<payload>`, 32 bytes less per message at common sizes) or `'json'`
 * (`{"t":...,"p":...}`, which releases before this one read too). Both are read everywhere. A
 * fresh prefix starts compact; one that an older release used stays JSON until switched.
 */
export type RedisAckQueueStoredFormat = 'json' | 'compact';
