import { InvalidOptionError, ReencryptWithoutCodecError } from '../errors';
import type { BulkOptions, BulkStarted, BulkStatus, ReencryptOptions } from '../interfaces';
import { bulkRate, bulkSelection } from './bulk-options';
import type { QueueCore } from './queue-core';
import { assertTopic, isWellFormed } from './validation';

/** How much longer than commandTimeoutMs a selection may take (a script per partition over each match). */
const SELECTION_EXTRA_MS = 60_000;

/** Told when this service started a bulk action: its runner loop then runs (see ServiceBulkRunner). */
export interface BulkStarts {
  started(): void;
}

/**
 * Bulk actions by filter (see RedisAckQueueBulkApi): selecting at once, then left to the runners
 * of the prefix; their status and abort. A part of RedisAckQueueService.
 */
export class QueueBulk {
  constructor(
    private readonly core: QueueCore,
    private readonly runners: BulkStarts,
  ) {}

  async bulk(topic: string, options: BulkOptions): Promise<BulkStarted> {
    const started = await this.core.call(
      'start a bulk action',
      topic,
      async () => {
        assertTopic(topic);
        const selection = bulkSelection(options);
        return this.core.engine.bulks.start(topic, selection);
        // The selection is one script per partition over every matching message: given longer.
      },
      SELECTION_EXTRA_MS,
    );
    if (started.selected > 0) this.runners.started();
    return started;
  }

  /**
   * Every value stored for the topic sealed again under its writer, as a bulk action that selects
   * every message with a body or record (state `any`) and that only a runner whose writer seals
   * under the same key id runs (see BulkResealing).
   */
  async reencrypt(topic: string, options: ReencryptOptions = {}): Promise<BulkStarted> {
    const started = await this.core.call(
      'start a bulk action',
      topic,
      async () => {
        assertTopic(topic);
        if (typeof options !== 'object' || options === null)
          throw new InvalidOptionError('options', options, 'an object of maxPerSecond');
        const maxPerSecond = bulkRate(options.maxPerSecond);
        const writer = this.core.codecs.writer(topic);
        if (!writer) throw new ReencryptWithoutCodecError(topic);
        const requires = writer.keyId ?? '';
        return this.core.engine.bulks.start(topic, { action: 'reencrypt', state: 'any', maxPerSecond, requires });
      },
      SELECTION_EXTRA_MS,
    );
    if (started.selected > 0) this.runners.started();
    return started;
  }

  bulkStatus(id: string): Promise<BulkStatus | null> {
    return this.core.call('read a bulk action', undefined, () => {
      assertBulkId(id);
      return this.core.engine.bulks.status(id);
    });
  }

  abortBulk(id: string): Promise<boolean> {
    return this.core.call('abort a bulk action', undefined, () => {
      assertBulkId(id);
      return this.core.engine.bulks.abort(id);
    });
  }
}

function assertBulkId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 64 || !isWellFormed(id))
    throw new InvalidOptionError('id', id, 'a bulk action id as bulk() returned it');
}
