import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/connection';
import { fleetEventsKey } from '../keys/queue-keys';

/** One stream entry: its id (`<server ms>-<seq>`) and its fields as pairs. */
export type FleetEventEntry = [id: string, fields: string[]];

/**
 * The prefix's capped event stream in Redis: appends (one pipeline of XADD per batch, on the
 * service's connection) and readers (XREAD BLOCK, each on a connection of its own, as a
 * blocked connection can carry nothing else).
 */
export class FleetEventStream {
  readonly key: string;

  /** @param prefix - The prefix as keys spell it. */
  constructor(
    private readonly client: RedisClient,
    prefix: string,
  ) {
    this.key = fleetEventsKey(prefix);
  }

  /** Appends the entries in order, keeping about `maxLen` (MAXLEN ~: trimmed by whole nodes, cheaply). */
  async append(entries: readonly string[][], maxLen: number): Promise<void> {
    const pipeline = this.client.pipeline();
    for (const fields of entries) pipeline.xadd(this.key, 'MAXLEN', '~', maxLen, '*', ...fields);
    const failed = (await pipeline.exec())?.find(([error]) => error)?.[0];
    if (failed) throw failed;
  }

  reader(): FleetEventReader {
    return new FleetEventReader(this.client, this.key);
  }
}

/** A blocking reader of the stream on a connection of its own; close() ends a read under way. */
export class FleetEventReader {
  private readonly connection: RedisClient;

  constructor(
    client: RedisClient,
    private readonly key: string,
  ) {
    this.connection =
      client instanceof Cluster
        ? client.duplicate(undefined, { enableAutoPipelining: false })
        : client.duplicate({ enableAutoPipelining: false });
    // A reader reports a failed read by rejecting it; the connection's own errors say nothing more.
    this.connection.on('error', () => undefined);
  }

  /** The id of the newest entry ('0-0' when the stream is empty or missing): reading after it reads from now. */
  async newestId(): Promise<string> {
    const [newest] = await this.connection.xrevrange(this.key, '+', '-', 'COUNT', 1);
    return newest?.[0] ?? '0-0';
  }

  /** Entries after `afterId`, waiting up to `blockMs` for one; [] when none came. */
  async read(afterId: string, blockMs: number, count: number): Promise<FleetEventEntry[]> {
    const reply = await this.connection.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.key, afterId);
    return reply?.[0]?.[1] ?? [];
  }

  close(): void {
    this.connection.disconnect();
  }
}
