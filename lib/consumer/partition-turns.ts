/**
 * The turns of a topic's partitions in one poller: round robin over those not known to be
 * empty. When all are, the poller waits (for a wake-up or the earliest due time) and then
 * tries every partition again.
 */
export class PartitionTurns {
  private readonly empty: boolean[];
  /** Local time when each empty partition has something due; -1 for nothing scheduled. */
  private readonly dueAt: number[];
  private last = -1;

  constructor(readonly count: number) {
    this.empty = new Array<boolean>(count).fill(false);
    this.dueAt = new Array<number>(count).fill(-1);
  }

  next(): number {
    const count = this.empty.length;
    for (let step = 1; step <= count; step++) {
      const partition = (this.last + step) % count;
      if (!this.empty[partition]) return (this.last = partition);
    }
    return (this.last = (this.last + 1) % count);
  }

  /** Records a reserve's outcome; returns the wait when every partition is now empty. */
  report(partition: number, empty: boolean, nextDueInMs: number): { nextDueInMs: number } | undefined {
    this.empty[partition] = empty;
    this.dueAt[partition] = nextDueInMs >= 0 ? Date.now() + nextDueInMs : -1;
    if (!this.empty.every(Boolean)) return undefined;
    const due = this.dueAt.filter((at) => at >= 0);
    return { nextDueInMs: due.length === 0 ? -1 : Math.max(0, Math.min(...due) - Date.now()) };
  }

  reset(): void {
    this.empty.fill(false);
  }
}
