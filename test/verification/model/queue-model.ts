/**
 * An in-memory model of one topic of the queue, as README.md and docs/guarantees.md, lookup.md,
 * pause.md, flows.md and key-modes.md promise it. Each operation answers what the library must
 * answer and moves the model as the library must move its message. Time does not pass in it:
 * delays and retries are an hour long (never due during a run) and leases a minute (never lost),
 * so every answer is exact. The model is plain data, so `clone()` lets the race tests replay
 * every order of a few concurrent operations.
 */

export type ModelState = 'ready' | 'delayed' | 'leased' | 'dead' | 'completed' | 'waiting-children';
export type KeyMode = 'debounce' | 'throttle' | 'supersede-keep' | 'supersede-cancel';

export interface ModelMessage {
  id: string;
  state: ModelState;
  payload: number;
  priority: number;
  attempt: number;
  maxAttempts: number;
  /** Place in its priority level while ready: lower first (a release takes a place before all). */
  order: number;
  /** The key (as pushed) and mode of a keyed message, while it is live. */
  key?: { name: string; mode: KeyMode };
  /** A supersede message waiting for its key's running (or cancelled but unreturned) one. */
  waitsForKey?: boolean;
  /** Leased past its deadline: still `leased` to `get` and its token still acks, but the next reserve takes it back. */
  expired?: boolean;
  /** Delayed but due: moved to the tail of ready by the next reserve (stats counts it as ready already). */
  due?: boolean;
  parent?: string;
  children?: string[];
  /** The children acked so far (of a parent), whatever the parent's state then. */
  ackedChildren?: string[];
  /** A parent dead as `child-failed` (not by its own failure). */
  diedOfChild?: boolean;
  /** A child that died (its failure recorded with its parent) and has not been acked since. */
  failedForParent?: boolean;
}

/** The key's running message, its not-yet-started one, and a cancelled one whose handler has not returned. */
interface KeyEntry {
  latest?: string;
  running?: string;
  heldBy?: string;
}

export type PushAnswer =
  { id: string; duplicate: boolean } | { id: string; debounced: true } | { id: string; superseded: true };

export interface PlainPush {
  id?: string;
  payload: number;
  delayed: boolean;
  priority: number;
  maxAttempts: number;
}

export interface ModelData {
  messages: Record<string, ModelMessage>;
  /** Who holds each message's last lease handle the test kept, and whether it is still the current one. */
  handles: Record<string, { live: boolean; lease: number }>;
  keys: Record<string, KeyEntry>;
  /** Throttle windows: an hour long, so open for the whole run once opened. */
  windows: Record<string, string>;
  paused: boolean;
  nextOrder: number;
  nextHeadOrder: number;
  flows: number;
}

export const SERVICE_MAX_ATTEMPTS = 2;

export class QueueModel {
  constructor(
    readonly data: ModelData = {
      messages: {},
      handles: {},
      keys: {},
      windows: {},
      paused: false,
      nextOrder: 0,
      nextHeadOrder: 0,
      flows: 0,
    },
  ) {}

  clone(): QueueModel {
    return new QueueModel(structuredClone(this.data));
  }

  get(id: string): ModelMessage | undefined {
    return this.data.messages[id];
  }

  ids(): string[] {
    return Object.keys(this.data.messages);
  }

  handleIds(): string[] {
    return Object.keys(this.data.handles);
  }

  inState(state: ModelState): ModelMessage[] {
    return Object.values(this.data.messages).filter((message) => message.state === state);
  }

  /** Ready messages in the order they will be served: higher priority first, then by place. */
  readyInOrder(): ModelMessage[] {
    return this.inState('ready').sort((a, b) => b.priority - a.priority || a.order - b.order);
  }

  /** A plain push; `newId` is the id the library chose when the push named none. */
  push(push: PlainPush, newId: string): PushAnswer {
    const id = push.id ?? newId;
    if (this.data.messages[id]) return { id, duplicate: true };
    this.data.messages[id] = {
      id,
      state: push.delayed ? 'delayed' : 'ready',
      payload: push.payload,
      priority: push.priority,
      attempt: 0,
      maxAttempts: push.maxAttempts,
      order: this.data.nextOrder++,
    };
    return { id, duplicate: false };
  }

  /** A push with a key mode (keyed messages get maxAttempts 1: a failure ends them). */
  pushKeyed(mode: KeyMode, name: string, payload: number, newId: string): PushAnswer {
    if (mode === 'throttle') {
      const holder = this.data.windows[name];
      if (holder !== undefined) return { id: holder, duplicate: true };
      this.data.windows[name] = newId;
      this.store(newId, 'ready', payload, { name, mode });
      return { id: newId, duplicate: false };
    }
    const entry = (this.data.keys[name] ??= {});
    if (entry.latest !== undefined) {
      // Not started yet: it takes this payload and keeps its place (same priority, no later due time).
      const latest = this.data.messages[entry.latest];
      latest.payload = payload;
      // A supersede push moves its due time to the push's (now): one that was due is ready at once, at the tail.
      if (latest.due && mode !== 'debounce')
        Object.assign(latest, { due: false, state: 'ready', order: this.data.nextOrder++ });
      return mode === 'debounce' ? { id: entry.latest, debounced: true } : { id: entry.latest, superseded: true };
    }
    if (mode === 'debounce') {
      this.store(newId, 'delayed', payload, { name, mode });
      entry.latest = newId;
      return { id: newId, duplicate: false };
    }
    if (mode === 'supersede-cancel' && entry.running !== undefined) {
      const running = entry.running;
      this.remove(running);
      entry.running = undefined;
      entry.heldBy = running;
    }
    const waits = entry.running !== undefined || entry.heldBy !== undefined;
    this.store(newId, waits ? 'delayed' : 'ready', payload, { name, mode });
    if (waits) this.data.messages[newId].waitsForKey = true;
    entry.latest = newId;
    return { id: newId, duplicate: false };
  }

  /**
   * A flow of a parent and two leaf children on this topic: the children ready, the parent waiting
   * for them. Child `a` has one attempt (a reject dead-letters it, as retries never come due in a
   * run), `b` the service's.
   */
  pushFlow(): { parent: string; children: { id: string; maxAttempts: number }[] } {
    const parent = `flow-${++this.data.flows}`;
    const children = [
      { id: `${parent}.a`, maxAttempts: 1 },
      { id: `${parent}.b`, maxAttempts: SERVICE_MAX_ATTEMPTS },
    ];
    for (const { id, maxAttempts } of children) {
      this.store(id, 'ready', 0);
      Object.assign(this.data.messages[id], { parent, maxAttempts });
    }
    this.store(parent, 'waiting-children', 0);
    Object.assign(this.data.messages[parent], {
      children: children.map(({ id }) => id),
      ackedChildren: [],
      maxAttempts: SERVICE_MAX_ATTEMPTS,
    });
    return { parent, children };
  }

  /** What `reserve(count)` must lease, in order (nothing while paused). */
  reserve(count: number): ModelMessage[] {
    if (this.data.paused) return [];
    // An expired lease goes back to the head of its level, or to the dead letters after its last attempt.
    for (const message of this.inState('leased').filter((leased) => leased.expired)) {
      message.expired = false;
      this.data.handles[message.id].live = false;
      if (message.attempt >= message.maxAttempts) this.die(message);
      else Object.assign(message, { state: 'ready', order: -++this.data.nextHeadOrder });
    }
    const due = this.inState('delayed')
      .filter((message) => message.due)
      .sort((a, b) => a.order - b.order);
    for (const message of due) {
      message.state = 'ready';
      message.due = false;
      message.order = this.data.nextOrder++;
    }
    const taken = this.readyInOrder().slice(0, count);
    for (const message of taken) {
      message.state = 'leased';
      message.expired = false;
      message.attempt += 1;
      this.data.handles[message.id] = { live: true, lease: (this.data.handles[message.id]?.lease ?? 0) + 1 };
      if (message.key && message.key.mode !== 'throttle') {
        const entry = this.data.keys[message.key.name];
        if (entry.latest === message.id) entry.latest = undefined;
        entry.running = message.id;
      }
    }
    return taken.map((message) => ({ ...message }));
  }

  ack(id: string, lease?: number): boolean {
    if (this.isStale(id, lease)) return this.staleAnswer(id, false);
    const message = this.data.messages[id];
    this.data.handles[id].live = false;
    message.state = 'completed';
    this.leaveKey(message);
    this.childEnded(message, 'acked');
    return true;
  }

  nack(id: string, lease?: number): 'retry' | 'dead' | 'lost' {
    if (this.isStale(id, lease)) return this.staleAnswer(id, 'lost');
    const message = this.data.messages[id];
    this.data.handles[id].live = false;
    if (message.attempt < message.maxAttempts) {
      message.state = 'delayed';
      return 'retry';
    }
    this.die(message);
    return 'dead';
  }

  release(id: string, lease?: number): boolean {
    // A refused release does not tell the key that the handler returned: only a refused ack or nack does (key-modes.md).
    if (this.isStale(id, lease)) return false;
    const message = this.data.messages[id];
    this.data.handles[id].live = false;
    message.state = 'ready';
    message.attempt -= 1;
    message.order = -++this.data.nextHeadOrder;
    return true;
  }

  /** `cancel(id)`: the state it was in, or null; a parent's unended children go with it, a child's cancel fails its parent. */
  cancel(id: string): ModelState | null {
    const message = this.data.messages[id];
    if (!message) return null;
    const was = message.state;
    const { parent, children } = message;
    this.remove(id);
    if (message.key && message.key.mode !== 'throttle') {
      const entry = this.data.keys[message.key.name];
      if (entry.latest === id) entry.latest = undefined;
      if (entry.running === id) {
        entry.running = undefined;
        // A running supersede message cancelled by hand holds its key until its handler returned.
        if (was === 'leased' && message.key.mode !== 'debounce') entry.heldBy = id;
        this.promoteWaiting(message.key.name);
      }
    }
    if (was !== 'dead' && was !== 'completed' && parent) this.childFailed(parent);
    for (const child of children ?? []) {
      const state = this.data.messages[child]?.state;
      if (state && state !== 'dead' && state !== 'completed') this.cancel(child);
    }
    return was;
  }

  /**
   * `requeueDead(topic, [id])`: a dead letter back to the tail of ready, its attempts reset. A parent
   * dead as `child-failed` takes its dead children with it and waits for them; one whose failed child
   * is gone is refused (`'child-gone'`: FlowChildGoneError, nothing changes).
   */
  requeueDead(id: string): number | 'child-gone' {
    const message = this.data.messages[id];
    if (message?.state !== 'dead') return 0;
    if (message.diedOfChild) {
      const failed = this.failedChildren(message);
      if (failed.some((child) => !this.data.messages[child])) return 'child-gone';
      for (const child of failed) this.requeue(this.data.messages[child]);
      Object.assign(message, { state: 'waiting-children', attempt: 0, diedOfChild: false });
      return 1;
    }
    this.requeue(message);
    return 1;
  }

  private requeue(message: ModelMessage): void {
    Object.assign(message, { state: 'ready', attempt: 0, order: this.data.nextOrder++ });
  }

  /** The lease of `id` ran past its deadline (the race tests wait for the server's clock to pass it). */
  expire(id: string): void {
    this.data.messages[id].expired = true;
  }

  pause(): void {
    this.data.paused = true;
  }

  resume(): void {
    this.data.paused = false;
  }

  stats(): { ready: number; delayed: number; leased: number; dead: number; paused: boolean; waitingChildren?: number } {
    const waiting = this.inState('waiting-children').length;
    const due = this.inState('delayed').filter((message) => message.due).length;
    const expired = this.inState('leased').filter((message) => message.expired).length;
    return {
      ready: this.inState('ready').length + due + expired,
      delayed: this.inState('delayed').length - due,
      leased: this.inState('leased').length - expired,
      dead: this.inState('dead').length,
      paused: this.data.paused,
      ...(waiting > 0 ? { waitingChildren: waiting } : {}),
    };
  }

  private store(id: string, state: ModelState, payload: number, key?: ModelMessage['key']): void {
    this.data.messages[id] = {
      id,
      state,
      payload,
      priority: 0,
      attempt: 0,
      maxAttempts: key ? 1 : SERVICE_MAX_ATTEMPTS,
      order: this.data.nextOrder++,
      ...(key ? { key } : {}),
    };
  }

  /** Whether the handle of `id` (of lease number `lease`, the latest when not given) no longer holds the message. */
  private isStale(id: string, lease?: number): boolean {
    const handle = this.data.handles[id];
    return !handle.live || (lease !== undefined && lease !== handle.lease);
  }

  private remove(id: string): void {
    delete this.data.messages[id];
    if (this.data.handles[id]) this.data.handles[id].live = false;
  }

  /** A stale handle's ack or nack changes nothing, but tells a key held by its cancelled message that its handler returned. */
  private staleAnswer<T>(id: string, answer: T): T {
    for (const [name, entry] of Object.entries(this.data.keys)) {
      if (entry.heldBy !== id) continue;
      entry.heldBy = undefined;
      this.promoteWaiting(name);
    }
    return answer;
  }

  private die(message: ModelMessage): void {
    message.state = 'dead';
    this.leaveKey(message);
    if (message.parent) {
      message.failedForParent = true;
      this.childFailed(message.parent);
    }
  }

  /** An ended keyed message leaves its key (a throttle window stays), letting a waiting one start. */
  private leaveKey(message: ModelMessage): void {
    const key = message.key;
    if (!key) return;
    delete message.key;
    if (key.mode === 'throttle') return;
    const entry = this.data.keys[key.name];
    if (entry.running === message.id) entry.running = undefined;
    this.promoteWaiting(key.name);
  }

  private promoteWaiting(name: string): void {
    const entry = this.data.keys[name];
    if (entry.running !== undefined || entry.heldBy !== undefined || entry.latest === undefined) return;
    const waiting = this.data.messages[entry.latest];
    if (!waiting?.waitsForKey) return;
    // Due now rather than ready: the next reserve moves it to the tail of ready.
    waiting.waitsForKey = false;
    waiting.due = true;
    waiting.order = this.data.nextOrder++;
  }

  /**
   * A child's ack: its waiting parent is ready once every child was acked; a parent dead as
   * `child-failed` comes back when a requeued failed child is acked and no child has failed since
   * (flows.md): ready, or waiting for the rest. A sibling's ack meanwhile leaves it dead.
   */
  private childEnded(child: ModelMessage, _outcome: 'acked'): void {
    const parent = child.parent ? this.data.messages[child.parent] : undefined;
    if (!parent) return;
    parent.ackedChildren!.push(child.id);
    const requeuedFailure = child.failedForParent === true;
    child.failedForParent = false;
    const comesBack =
      requeuedFailure && parent.state === 'dead' && parent.diedOfChild && this.failedChildren(parent).length === 0;
    if (parent.state !== 'waiting-children' && !comesBack) return;
    parent.diedOfChild = false;
    if (parent.children!.every((id) => parent.ackedChildren!.includes(id)))
      Object.assign(parent, { state: 'ready', order: this.data.nextOrder++ });
    else parent.state = 'waiting-children';
  }

  /** A parent's children that failed and were not acked since: dead ones, and gone ones (cancelled). */
  private failedChildren(parent: ModelMessage): string[] {
    return parent.children!.filter(
      (id) =>
        !parent.ackedChildren!.includes(id) &&
        this.data.messages[id]?.state !== 'ready' &&
        this.data.messages[id]?.state !== 'delayed' &&
        this.data.messages[id]?.state !== 'leased',
    );
  }

  /** A child that failed (dead or cancelled) dead-letters its waiting parent as `child-failed`. */
  private childFailed(parentId: string): void {
    const parent = this.data.messages[parentId];
    if (parent?.state !== 'waiting-children') return;
    this.die(parent);
    parent.diedOfChild = true;
  }
}
