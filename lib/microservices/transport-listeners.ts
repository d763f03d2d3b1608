import type { Observable, Subscription } from 'rxjs';
import type { RedisAckQueueEvent } from '../interfaces';

type Listener = (event: RedisAckQueueEvent) => void;

/**
 * The listeners `on()` of a transport's server or client adds: one subscription to the queue's
 * events while any listener is left (a subscriber there makes every delivery build its events),
 * a listener added twice for one type called once, each `on()` returning its own way out.
 */
export class TransportListeners {
  private readonly byType = new Map<string, Set<Listener>>();
  private subscription: Subscription | undefined;

  constructor(private events$: Observable<RedisAckQueueEvent>) {}

  /**
   * Listens to another service's events from now on (the app handed its settings to the transport
   * before it connected, which replaces its service): listeners added before stay.
   */
  follow(events$: Observable<RedisAckQueueEvent>): void {
    this.events$ = events$;
    if (!this.subscription) return;
    this.subscription.unsubscribe();
    this.subscription = undefined;
    this.subscribe();
  }

  /** Calls `listener` with each event of type `type` until the returned function is called. */
  add(type: string, listener: Listener): () => void {
    let listeners = this.byType.get(type);
    if (!listeners) {
      listeners = new Set();
      this.byType.set(type, listeners);
    }
    listeners.add(listener);
    this.subscribe();
    return () => this.remove(type, listener);
  }

  private subscribe(): void {
    this.subscription ??= this.events$.subscribe((event) => {
      for (const each of [...(this.byType.get(event.type) ?? [])]) each(event);
    });
  }

  /** Removes every listener (the transport closes). */
  clear(): void {
    this.byType.clear();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private remove(type: string, listener: Listener): void {
    const listeners = this.byType.get(type);
    if (!listeners?.delete(listener)) return;
    if (listeners.size === 0) this.byType.delete(type);
    if (this.byType.size === 0) this.clear();
  }
}
