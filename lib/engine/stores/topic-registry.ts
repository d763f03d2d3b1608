import { RedisCommandError } from '../../errors';
import type { QueueLogger } from '../../observability/queue-logger';
import { MESSAGES } from '../../common/redis-ack-queue.messages';
import { topicIndexKeys, type TopicIndexKeys } from '../keys/queue-keys';
import type { ScriptRunner } from '../scripts/script-runner';

/**
 * The prefix-wide registry of topics (one SET in a slot of its own). A service records each
 * topic once, the first time it pushes to it or consumes it: later calls cost a lookup in a
 * local Set and no command. A record Redis could not take (unavailable) is forgotten locally,
 * so the next call retries, and never fails the call that caused it; one Redis refused (NOPERM: an ACL user whose key patterns leave out `{<prefix>:}:topics`) is
 * logged once and does not fail the push or reserve that caused it.
 */
export class TopicRegistry {
  private readonly keys: TopicIndexKeys;
  /** Topics recorded (or being recorded) by this service. */
  private readonly recorded = new Map<string, Promise<void>>();

  constructor(
    private readonly scripts: ScriptRunner,
    prefix: string,
    private readonly logger: QueueLogger,
  ) {
    this.keys = topicIndexKeys(prefix);
  }

  /** Records the topic unless this service did already: undefined then (the hot path's answer). */
  note(topic: string): Promise<void> | undefined {
    if (this.recorded.has(topic)) return undefined;
    const recording = this.scripts.run<number>('topicAdd', topic, this.keys, [topic]).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof RedisCommandError)
          return this.logger.warn(MESSAGES.topicNotRegistered(topic, error.message));
        // Unavailable: the call that caused it goes on and fails (or not) under its own name.
        this.recorded.delete(topic);
      },
    );
    this.recorded.set(topic, recording);
    return recording;
  }

  /**
   * Records again every topic this service recorded (after Redis lost the registry); resolves
   * with how many, once each was recorded (or failed as note() says).
   */
  async recordAgain(): Promise<number> {
    const topics = [...this.recorded.keys()];
    this.recorded.clear();
    await Promise.all(topics.map((topic) => this.note(topic) ?? Promise.resolve()));
    return topics.length;
  }

  /** The registered topics, sorted. */
  async list(): Promise<string[]> {
    const topics = await this.scripts.run<string[]>('topicList', undefined, this.keys, []);
    return topics.sort();
  }

  /** Removes the topic from the registry; true when it was there. This service records it again on its next push. */
  async forget(topic: string): Promise<boolean> {
    this.recorded.delete(topic);
    return (await this.scripts.run<number>('topicForget', topic, this.keys, [topic])) === 1;
  }
}
