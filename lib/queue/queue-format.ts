import { InvalidOptionError } from '../errors';
import type { RedisAckQueueStoredFormat } from '../interfaces';
import type { QueueCore } from './queue-core';

/** The prefix's stored format (see RedisAckQueueTopicsApi): a part of RedisAckQueueService. */
export class QueueFormat {
  constructor(private readonly core: QueueCore) {}

  storedFormat(): Promise<RedisAckQueueStoredFormat> {
    return this.core.call('read the stored format', undefined, async () => {
      return (await this.core.engine.format.read()) ?? 'json';
    });
  }

  setStoredFormat(format: RedisAckQueueStoredFormat): Promise<void> {
    return this.core.call('set the stored format', undefined, () => {
      if (format !== 'json' && format !== 'compact')
        throw new InvalidOptionError('format', format, "'json' or 'compact'");
      return this.core.engine.format.set(format);
    });
  }
}
