import type { RedisAckQueueStoredFormat } from '../../interfaces';
import { sendCommand } from '../redis/redis-command';
import type { RedisClient } from '../redis/connection';
import { storedFormatKey } from '../keys/queue-keys';
import { release01UsedKeys } from '../keys/release-0.1';

/**
 * The prefix's stored format (how push stores a message without headers, group or maxAttempts;
 * StoredBody in wire-format.ts), one key in the prefix's own slot. Releases before this one read
 * JSON only: their consumers bury a compact body as malformed. A prefix without one gets one
 * from the first service that loads it: `'compact'` when the prefix holds nothing any release
 * wrote at connect or first use (no data marker, topic registry or schedule index), else
 * `'json'` until an operator switches it (setStoredFormat), once no older process runs.
 */
export class StoredFormat {
  private readonly key: string;
  private readonly olderKeys: string[];
  private current: RedisAckQueueStoredFormat = 'json';

  constructor(
    private readonly client: RedisClient,
    prefix: string,
  ) {
    this.key = storedFormatKey(prefix);
    this.olderKeys = release01UsedKeys(prefix);
  }

  /**
   * Whether this service writes the compact form: only after load() found (or chose) it. Compact
   * also says no process of a release before 0.2 runs on the prefix, so reserve keeps the encoding
   * anchor (prelude.lua) and grouped messages wait in their groups' ZSETs (prelude-groups.lua).
   */
  get compact(): boolean {
    return this.current === 'compact';
  }

  /** Reads the prefix's format, choosing it where none is (SET NX: every service agrees). */
  async load(): Promise<RedisAckQueueStoredFormat> {
    let format = await this.read();
    if (format === undefined) {
      const older = await sendCommand(this.client, 'connect', undefined, () => this.client.exists(...this.olderKeys));
      const wanted: RedisAckQueueStoredFormat = older > 0 ? 'json' : 'compact';
      const found = await sendCommand(this.client, 'connect', undefined, () =>
        this.client.set(this.key, wanted, 'NX', 'GET'),
      );
      format = found === null ? wanted : asFormat(found);
    }
    this.current = format;
    return format;
  }

  /** The prefix's format as stored; undefined when none was chosen. */
  async read(): Promise<RedisAckQueueStoredFormat | undefined> {
    const stored = await sendCommand(this.client, 'read the stored format', undefined, () => this.client.get(this.key));
    return stored === null ? undefined : asFormat(stored);
  }

  /** Sets the prefix's format, and this service's at once. */
  async set(format: RedisAckQueueStoredFormat): Promise<void> {
    await sendCommand(this.client, 'set the stored format', undefined, () => this.client.set(this.key, format));
    this.current = format;
  }
}

/** Anything but 'compact' reads as JSON, the form every release reads. */
function asFormat(stored: string): RedisAckQueueStoredFormat {
  return stored === 'compact' ? 'compact' : 'json';
}
