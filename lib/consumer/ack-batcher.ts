import type { ReservedMessage } from '../interfaces';

type Lease = Pick<ReservedMessage, 'id' | 'token' | 'attempt'>;

/**
 * Collects the acks of one event-loop turn and sends them in one script call: handlers
 * that finish together cost Redis one call, not one each.
 */
export class AckBatcher {
  private batch: { lease: Lease; resolve: (acked: boolean) => void; reject: (error: unknown) => void }[] = [];

  constructor(private readonly send: (leases: Lease[]) => Promise<boolean[]>) {}

  /** Resolves true once acked, false when the lease was no longer this one. */
  ack(lease: Lease): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.batch.push({ lease, resolve, reject }) === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    try {
      const flags = await this.send(batch.map((b) => b.lease));
      batch.forEach((b, i) => b.resolve(flags[i]));
    } catch (error) {
      batch.forEach((b) => b.reject(error));
    }
  }
}
