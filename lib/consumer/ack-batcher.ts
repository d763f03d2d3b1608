/**
 * Collects the acks of one event-loop turn and sends them in one script call: handlers
 * that finish together cost Redis one call, not one each. The answers come back through
 * `settled` and `failed` per lease, so a message costs no promise of its own here.
 */
export class AckBatcher<L> {
  private batch: L[] = [];
  /** Batches scheduled or sent and not answered yet. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly send: (leases: L[]) => Promise<boolean[]>,
    /** One call per lease: true once acked, false when the lease was no longer this one. */
    private readonly settled: (lease: L, acked: boolean) => void,
    /** The call failed: its leases run out and are delivered again. */
    private readonly failed: (lease: L, error: unknown) => void,
    /** False for an ack that must go on its own (a completed record to keep): `take` leaves it. */
    private readonly rideAlong: (lease: L) => boolean = () => true,
  ) {}

  ack(lease: L): void {
    if (this.batch.push(lease) === 1) this.schedule();
  }

  /**
   * Takes up to `max` acks not sent yet, for a caller that sends them inside another script
   * call (reserve); it must hand each one to `settle`, `fail` or `resend`.
   */
  take(max = Infinity): L[] {
    if (this.batch.every(this.rideAlong)) return this.takeBatch(max);
    const riding = this.batch.filter(this.rideAlong).slice(0, max);
    const taken = new Set(riding);
    this.batch = this.batch.filter((lease) => !taken.has(lease));
    return riding;
  }

  private takeBatch(max = Infinity): L[] {
    if (this.batch.length <= max) {
      const batch = this.batch;
      this.batch = [];
      return batch;
    }
    return this.batch.splice(0, max);
  }

  /** Sends taken acks on their own after all (the call that carried them failed). */
  resend(leases: L[]): void {
    if (leases.length === 0) return;
    const first = this.batch.length === 0;
    this.batch.unshift(...leases);
    if (first) this.schedule();
  }

  /** Resolves once every ack handed over so far has its answer. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  settle(leases: L[], flags: boolean[]): void {
    for (let i = 0; i < leases.length; i++) this.settled(leases[i], flags[i]);
  }

  fail(leases: L[], error: unknown): void {
    for (const lease of leases) this.failed(lease, error);
  }

  /**
   * Flushes two event-loop turns later: a consumer that reserves in the next turn takes the
   * acks along instead (see take).
   */
  private schedule(): void {
    const flushed: Promise<void> = new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))
      .then(() => this.flush())
      .finally(() => this.pending.delete(flushed));
    this.pending.add(flushed);
  }

  private async flush(): Promise<void> {
    const batch = this.takeBatch();
    if (batch.length === 0) return;
    try {
      this.settle(batch, await this.send(batch));
    } catch (error) {
      this.fail(batch, error);
    }
  }
}
