import type { OutboxDatabase, PgClient } from './outbox-database';

/**
 * What wakes a relay: a NOTIFY on the table's channel (LISTEN over a connection of its own,
 * opened again after it breaks, each open followed by a wake since notifications may have been
 * missed meanwhile), the poll timer, or stop. `wait` resolves at the first.
 */
export class RelayWake {
  private client: PgClient | undefined;
  private poked = false;
  private wakeNow: (() => void) | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectMs = 100;
  private connecting: Promise<void> | undefined;

  constructor(private readonly database: OutboxDatabase) {}

  /** Starts listening (in the background: a failure is retried, never thrown). */
  start(): void {
    this.connecting = this.listen();
  }

  /** Wakes the loop now (or its next wait, if it is not waiting). */
  poke(): void {
    this.poked = true;
    this.wakeNow?.();
  }

  /**
   * Waits `ms`, or less when poked (unless `firm`: a back-off, which only stop cuts short).
   * A poke that came while the loop was busy makes the next wait return at once.
   */
  wait(ms: number, firm = false): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (!firm && this.poked) {
      this.poked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wakeNow = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeNow = () => {
        if (firm && !this.stopped) return;
        this.poked = false;
        finish();
      };
    });
  }

  /** Stops waking: a wait under way ends, the LISTEN connection closes (bounded by the caller). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.wakeNow?.();
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end?.().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    let client: PgClient | undefined;
    try {
      client = await this.database.dedicated();
      // Set before LISTEN: a connection that breaks at any point is opened again.
      const opened = client;
      opened.on('error', () => this.broken(opened));
      (opened as unknown as { on(event: 'end', listener: () => void): unknown }).on('end', () => this.broken(opened));
      opened.on('notification', (message) => {
        if (message.channel === this.database.table.channel) this.poke();
      });
      if (this.stopped) {
        await opened.end?.().catch(() => undefined);
        return;
      }
      this.client = opened;
      // The channel is the table's checked name: quoted as an identifier, no parameter needed.
      await opened.query(`LISTEN "${this.database.table.channel}"`);
      this.reconnectMs = 100;
      this.poke();
    } catch {
      if (client) this.broken(client);
      else this.retry();
    }
  }

  private broken(client: PgClient): void {
    if (client !== this.client && this.client !== undefined) return;
    if (this.client === client) this.client = undefined;
    client.end?.().catch(() => undefined);
    // The loop tries the database now: an outage is said at once, and missed notifications are read.
    this.poke();
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.reconnectTimer) return;
    const ms = this.reconnectMs;
    this.reconnectMs = Math.min(this.reconnectMs * 2, 5_000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connecting = this.listen();
    }, ms);
    this.reconnectTimer.unref?.();
  }
}
