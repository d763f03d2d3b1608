/** Where a batch of acks goes and what its answers mean: the running side's part (LeaseKeeper.ackRoute). */
export interface AckRoute<L> {
  send(leases: L[]): Promise<boolean[]>;
  /** One call per lease: true once acked, false when the lease was no longer this one. */
  settled(lease: L, acked: boolean): void;
  /** The call failed: its leases run out and are delivered again. */
  failed(lease: L, error: unknown): void;
  /** False for an ack that must go on its own (a completed record to keep): `carry` leaves it. */
  rideAlong(lease: L): boolean;
}

/**
 * The one owner of a consumer's ack batch (as River's batch completer owns its completions):
 * it collects the acks of one event-loop turn and sends them in one script call, so handlers
 * that finish together cost Redis one call, not one each. Nobody else writes to the batch: a
 * reserve asks it to `carry` acks and it settles them from the reserve's answer itself.
 * The answers come back through `settled` and `failed` per lease, so a message costs no
 * promise of its own here.
 */
export class AckBatcher<L> {
  /** Acks not sent yet, oldest first. */
  private batch: L[] = [];
  /** Sends scheduled or under way (its own, or carried by another call) and not answered yet. */
  private readonly pending = new Set<Promise<void>>();

  /** The route's rideAlong, bound once: `take` passes it to every and filter. */
  private readonly rideAlong: (lease: L) => boolean;

  constructor(private readonly route: AckRoute<L>) {
    this.rideAlong = (lease) => route.rideAlong(lease);
  }

  ack(lease: L): void {
    if (this.batch.push(lease) === 1) this.schedule();
  }

  /**
   * Lets another script call (a reserve) carry up to `max` acks not sent yet: `call` gets them
   * and answers one flag per lease in `acked`. If it fails, the script changed nothing and the
   * acks go out on their own, ahead of newer ones. Returns the call's own promise.
   */
  carry<R extends { acked: boolean[] }>(max: number, call: (leases: L[]) => Promise<R>): Promise<R> {
    const leases = this.take(max);
    if (leases.length === 0) return call(leases);
    const answer = call(leases);
    // Settled before the caller sees the answer (registered first), as when it was sent alone.
    this.track(
      answer.then(
        ({ acked }) => this.settle(leases, acked),
        () => this.resend(leases),
      ),
    );
    return answer;
  }

  /** Resolves once every ack handed over so far has its answer. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  private take(max: number): L[] {
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

  private resend(leases: L[]): void {
    const first = this.batch.length === 0;
    this.batch.unshift(...leases);
    if (first) this.schedule();
  }

  private settle(leases: L[], flags: boolean[]): void {
    for (let i = 0; i < leases.length; i++) this.route.settled(leases[i], flags[i]);
  }

  /**
   * Flushes two event-loop turns later: a consumer that reserves in the next turn carries the
   * acks instead (see carry).
   */
  private schedule(): void {
    this.track(new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve))).then(() => this.flush()));
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private async flush(): Promise<void> {
    const batch = this.takeBatch();
    if (batch.length === 0) return;
    try {
      this.settle(batch, await this.route.send(batch));
    } catch (error) {
      for (const lease of batch) this.route.failed(lease, error);
    }
  }
}
