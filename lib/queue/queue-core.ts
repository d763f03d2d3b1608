import { QueueConnection } from '../engine/redis/queue-connection';
import { QueueEngine } from '../engine/queue-engine';
import { QueueClosedError } from '../errors';
import type { RedisAckQueueOptions } from '../interfaces';
import { QueueLogger } from '../observability/queue-logger';
import type { QueueTracing } from '../observability/tracing/queue-tracing';
import { tracingFor } from '../observability/tracing/tracing-option';
import { reportDeadParents } from './flow-deaths';
import { HistoryRecorder } from './history-recorder';
import { QueueEvents } from './queue-events';
import { resolveServiceSettings, type ServiceSettings } from './settings';
import { ValueCodecs } from './value-codecs';

/**
 * What every part of a service shares, built once per service: settings, logger, connection,
 * engine, event stream (with its tallies), tracing, the history recorder and the closed state. The parts of RedisAckQueueService each
 * hold this and never one another; only the service closes it.
 */
export class QueueCore {
  readonly settings: ServiceSettings;
  readonly logger: QueueLogger;
  readonly connection: QueueConnection;
  readonly engine: QueueEngine;
  readonly events = new QueueEvents();
  readonly tracing: QueueTracing | undefined;
  /** What this process adds to the topics' history; undefined with `history: false`. */
  readonly history: HistoryRecorder | undefined;
  /** The topics' codecs (options `codec` and `topicCodecs`): what seals and opens their stored values. */
  readonly codecs: ValueCodecs;
  private refusing = false;

  /**
   * @throws {InvalidOptionError} when an option has a bad value, or `connection` has no known form.
   * @throws {InvalidTopicError} when `prefix`, or a topic name in `topics`, is not a valid name.
   */
  constructor(options: RedisAckQueueOptions) {
    this.settings = resolveServiceSettings(options);
    this.codecs = ValueCodecs.of(options);
    this.logger = new QueueLogger(this.settings.logLevel);
    // Checked before the connection is made: a bad option leaves nothing behind.
    this.tracing = tracingFor(options.tracing);
    this.connection = new QueueConnection(options.connection, this.settings.commandTimeoutMs, this.logger);
    this.engine = new QueueEngine(this.connection.client, this.settings, this.logger);
    // Flow parents that die of a child's end are reported as any dead letter, wherever the end was
    // passed on; after the turn that ended the child, so its own event comes first, as the end did.
    this.engine.onParentsDead((parents) => void setImmediate(() => reportDeadParents(this, parents)));
    if (this.settings.history) {
      this.history = new HistoryRecorder(this.engine.history, this.logger);
      this.events.tally.add(this.history);
    }
  }

  /** From now on every call of the public API is refused with QueueClosedError. */
  refuseCalls(): void {
    this.refusing = true;
  }

  /** True once the service is closing (calls are refused). */
  get closing(): boolean {
    return this.refusing;
  }

  /** @throws {QueueClosedError} once the service is closing. */
  assertOpen(operation: string): void {
    if (this.refusing) throw new QueueClosedError(operation);
  }

  /**
   * One call of the public API: refused once the service is closing, then `work` (which
   * checks its arguments first) started, and its wait for Redis bounded by commandTimeoutMs
   * (+ `extraMs`), after which it rejects with RedisUnavailableError naming `operation`.
   * `operation` is said in the user's words ("read stats"), never a method or script name.
   */
  async call<T>(operation: string, topic: string | undefined, work: () => Promise<T>, extraMs = 0): Promise<T> {
    this.assertOpen(operation);
    return this.connection.within(operation, topic, work(), extraMs);
  }
}
