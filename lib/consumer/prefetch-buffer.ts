import type { ReservedMessage } from '../interfaces';

/**
 * A consumer holds at most this much expected handler work (by the average handler time)
 * reserved beyond its running handlers, so a free slot starts the next message without a
 * round trip. Slow handlers get no prefetch: other consumers keep the work.
 */
const PREFETCH_MS = 5;

/** Reserved messages waiting for a free slot, oldest first, and how many to hold. */
export class PrefetchBuffer<T> {
  private readonly waiting: ReservedMessage<T>[] = [];
  /** How many at the head were already waiting at the last heartbeat. */
  private stale = 0;
  /** Moving average of handler run time in ms; Infinity until one has finished. */
  private handlerMs = Infinity;
  /** A rate limit counts a message as started when it is reserved: then none may wait here. */
  private rateLimited = false;

  constructor(
    private readonly concurrency: number,
    private readonly batchSize: number,
  ) {}

  get size(): number {
    return this.waiting.length;
  }

  /** How many messages to hold beyond the running handlers: about PREFETCH_MS of work. */
  get target(): number {
    if (this.rateLimited) return 0;
    return Math.min(this.batchSize, Math.floor((this.concurrency * PREFETCH_MS) / this.handlerMs));
  }

  /**
   * What the last reserve said of the topic's rate limit. Once one is set, the messages waiting
   * here are returned to hand back: started late, they would crowd the next window's handlers.
   */
  rateLimit(limited: boolean): ReservedMessage<T>[] {
    this.rateLimited = limited;
    return limited ? this.takeAll() : [];
  }

  add(message: ReservedMessage<T>): void {
    this.waiting.push(message);
  }

  /** A handler finished after `ms`: learns the average; returns the next message to start, if any. */
  next(ms: number): ReservedMessage<T> | undefined {
    this.handlerMs = this.handlerMs === Infinity ? ms : this.handlerMs + (ms - this.handlerMs) / 8;
    if (this.waiting.length === 0) return undefined;
    if (this.stale > 0) this.stale--;
    return this.waiting.shift();
  }

  /**
   * The messages that have waited a whole heartbeat interval (a slow handler holds the
   * slots), to hand back so other consumers can take them and no lease runs out unextended.
   */
  takeStale(): ReservedMessage<T>[] {
    const waited = this.waiting.splice(0, this.stale);
    this.stale = this.waiting.length;
    // No more prefetch until a handler finishes again and shows how long handlers take now.
    if (waited.length > 0) this.handlerMs = Infinity;
    return waited;
  }

  takeAll(): ReservedMessage<T>[] {
    this.stale = 0;
    return this.waiting.splice(0);
  }
}
