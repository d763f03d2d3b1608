import { randomUUID } from 'node:crypto';
import { sendCommand } from '../redis/redis-command';
import type { RedisClient } from '../redis/connection';
import { dataMarkerKey } from '../keys/queue-keys';

/**
 * Tells whether Redis lost this prefix's data (a restart without persistence, a failover to a
 * replica that did not have it): a token in the prefix's own slot, written (SET NX) when the
 * service connects and read again on each reconnect. Gone or replaced, Redis lost it meanwhile;
 * each read writes a fresh token where none is, so every process sharing the prefix sees the
 * change once, whichever reconnects first. On a Cluster it watches the slot of the prefix
 * (and of the topic registry), not every master.
 */
export class DataMarker {
  private readonly key: string;
  /** The token read last; undefined until armed. */
  private known: string | undefined;

  constructor(
    private readonly client: RedisClient,
    prefix: string,
  ) {
    this.key = dataMarkerKey(prefix);
  }

  get armed(): boolean {
    return this.known !== undefined;
  }

  /** Writes the marker unless it is there, and remembers its token. */
  async arm(): Promise<void> {
    this.known = await this.read();
  }

  /** True when the marker is gone or replaced since the last read (it is written again). False until armed. */
  async lost(): Promise<boolean> {
    if (this.known === undefined) return false;
    const now = await this.read();
    const lost = now !== this.known;
    this.known = now;
    return lost;
  }

  /** The stored token, after writing a fresh one where none is (SET NX GET, safe to resend). */
  private async read(): Promise<string> {
    const token = randomUUID();
    const stored = await sendCommand(this.client, 'connect', undefined, () =>
      this.client.set(this.key, token, 'NX', 'GET'),
    );
    return stored ?? token;
  }
}
