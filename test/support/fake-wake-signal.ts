import type { WakeSignal } from '../../lib/engine/redis/wake-signal';

/** A WakeSignal the test drives: a wait resolves on wake() (or a wake-up left before it) or on stop. */
export class FakeWakeSignal implements WakeSignal {
  /** nextDueInMs of every wait, in order. */
  readonly waits: number[] = [];
  closed = false;
  private token = false;
  private wakeUp: (() => void) | undefined;
  private readonly watchers = new Set<() => void>();

  wait(nextDueInMs: number, stop: AbortSignal): Promise<void> {
    this.waits.push(nextDueInMs);
    for (const watcher of [...this.watchers]) watcher();
    if (this.token || stop.aborted) {
      this.token = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        stop.removeEventListener('abort', done);
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
      stop.addEventListener('abort', done);
    });
  }

  /** Ends the wait under way, or the next one at once (like a wake token left in the list). */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.token = true;
  }

  get waiting(): boolean {
    return this.wakeUp !== undefined;
  }

  /** Resolves once `count` waits have begun. */
  untilWaits(count: number): Promise<void> {
    return new Promise((resolve) => {
      const watcher = () => {
        if (this.waits.length < count) return;
        this.watchers.delete(watcher);
        resolve();
      };
      this.watchers.add(watcher);
      watcher();
    });
  }

  close(): void {
    this.closed = true;
  }
}
