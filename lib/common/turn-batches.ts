/**
 * Work gathered over one event-loop turn, by key, then handed over as one batch per key: the
 * calls of many callers that run together become one Redis call each (the transport's pushes,
 * a server's replies). The first item of a turn schedules the flush with setImmediate, not a
 * microtask: a caller's item comes several promise hops after the call that made it. Batches go
 * out in the order their keys first came, and a batch keeps its items' order.
 */
export class TurnBatches<Item> {
  private batches = new Map<string, Item[]>();

  constructor(private readonly send: (key: string, items: Item[]) => void) {}

  add(key: string, item: Item): void {
    if (this.batches.size === 0) setImmediate(() => this.flush());
    const batch = this.batches.get(key);
    if (batch) batch.push(item);
    else this.batches.set(key, [item]);
  }

  /** Hands over what waits now (also called by the turn's timer). */
  flush(): void {
    if (this.batches.size === 0) return;
    const batches = this.batches;
    this.batches = new Map();
    for (const [key, items] of batches) this.send(key, items);
  }
}
