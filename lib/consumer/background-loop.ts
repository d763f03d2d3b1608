/** The pause after a failed round (Redis down), before trying again. */
export const RETRY_MS = 1_000;

/**
 * A service's background loop (the scheduler's, the bulk runner's): runs `round` again and
 * again while the service wants it and it is not stopped, sleeping as each round answers (ms);
 * a failed round is reported once until a round succeeds, and tried again after RETRY_MS. It owns
 * the sleep and its early wake-up, start and stop; the rounds own the work.
 */
export class BackgroundLoop {
  private stopped = false;
  private failing = false;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;

  constructor(
    /** One round of work; resolves with how long to sleep before the next (0: at once). */
    private readonly round: () => Promise<number>,
    /** Whether the service still wants the loop: else it ends (start() begins it again). */
    private readonly wanted: () => boolean,
    /** A round failed (reported once until one succeeds); `first` is false while it keeps failing. */
    private readonly failed: (error: unknown, first: boolean) => void,
  ) {}

  get started(): boolean {
    return this.running !== undefined;
  }

  /** Whether stop() was called: rounds check it between their calls. */
  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    if (this.running || this.stopped) return;
    this.running = this.run();
  }

  /** Ends the current sleep now. */
  wake(): void {
    this.wakeUp?.();
  }

  /**
   * Stops the loop. Waits at most RETRY_MS for a call in flight (one Redis waits out is left to
   * finish or fail with the connection): each round's calls are atomic either way.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (bound = setTimeout(resolve, RETRY_MS)))]);
    clearTimeout(bound);
  }

  /** Sleeps `ms` unless stopped or woken first (rounds pace themselves with it too). */
  sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(this.timer);
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
      this.timer = setTimeout(done, ms);
    });
  }

  private async run(): Promise<void> {
    await this.loop();
    // Checked and cleared in one synchronous step: a start() from now on starts a new loop.
    this.running = undefined;
  }

  private async loop(): Promise<void> {
    while (!this.stopped && this.wanted()) {
      try {
        const sleepMs = await this.round();
        if (this.failing) this.failing = false;
        await this.sleep(sleepMs);
      } catch (error) {
        if (this.stopped) return;
        this.failed(error, !this.failing);
        this.failing = true;
        await this.sleep(RETRY_MS);
      }
    }
  }
}
