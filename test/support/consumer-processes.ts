import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ConsumerEvent {
  pid: number;
  type:
    | 'ready'
    | 'start'
    | 'done'
    | 'acked'
    | 'lease-lost'
    | 'error'
    // Fault tests: events$ 'retried', 'dead' and 'error' (as 'queue-error'), and the end of a SIGTERM drain.
    | 'retried'
    | 'dead'
    | 'queue-error'
    | 'closed'
    // Scheduler processes (scheduler-process.js): a tick this process pushed; producer
    // processes (producer-process.js): a push or pushMany, with `n`.
    | 'pushed'
    // Producer processes with a PLAN of deadlines: a push refused (InvalidOptionError).
    | 'refused';
  /** Of a consumer process' lines about a message: its topic. */
  topic?: string;
  id?: string;
  attempt?: number;
  /**
   * Of a start whose payload asked for it (`reportChildren: true`): what the handler's
   * `context.childResults()` and `context.failedChildren()` answered.
   */
  children?: Record<string, Record<string, unknown>>;
  failed?: unknown[];
  /** Of start and done: the message's ordered group, if any. */
  group?: string;
  /** Of a consumer process' start: the message's `enqueuedAt` (server clock). */
  enqueuedAt?: number;
  /**
   * Of a consumer process' acked: the event's `waitMs`; with the start's `enqueuedAt`, a first
   * delivery's start on the server clock (see test/support/start-times.ts).
   */
  waitMs?: number;
  /** Of a microservice process' start and done (microservice-process.js): the handler's pattern. */
  pattern?: string;
  /** The consumer process' own Date.now() when it printed the line. */
  now?: number;
  /** The test process' Date.now() when the line arrived. */
  receivedAt?: number;
  message?: string;
  /**
   * Of a producer process' pushed (producer-process.js): how many messages that pushMany stored;
   * of a microservice process' start and done: the payload's `n`.
   */
  n?: number;
  /** Of a producer process' pushed (producer-process.js): the ids that call stored. */
  ids?: string[];
  /** Of a producer process' pushed or refused with a PLAN: the startBy it computed from its own clock (ms). */
  startBy?: number;
  /** Of a producer process' pushed or refused with a PLAN: the expiresInMs it gave. */
  expiresInMs?: number;
  /** Of a producer process' refused: the option its InvalidOptionError named. */
  option?: string;
}

/** The reports that end a process' hold on a message: none of its lines about it comes later. */
const REPORTED_ENDS = new Set<ConsumerEvent['type']>(['acked', 'dead', 'lease-lost', 'queue-error']);

/** Consumer processes of the built library, whose events the test can read and count. */
export class ConsumerProcesses {
  readonly events: ConsumerEvent[] = [];
  private readonly children = new Set<ChildProcess>();
  private readonly arrivals = new EventEmitter();

  constructor(
    private readonly env: Record<string, string>,
    /** The process to run, in test/support: a consumer, or e.g. scheduler-process.js. */
    private readonly script = 'consumer-process.js',
  ) {
    this.arrivals.setMaxListeners(0);
  }

  /** Consumers of one topic on one server: the usual shape of a fault scenario. */
  static forTopic(
    redisUrl: string,
    topic: string,
    o: { leaseMs: number; handlerMs: number; concurrency?: number },
  ): ConsumerProcesses {
    return new ConsumerProcesses({
      REDIS_URL: redisUrl,
      TOPIC: topic,
      LEASE_MS: String(o.leaseMs),
      HANDLER_MS: String(o.handlerMs),
      CONCURRENCY: String(o.concurrency ?? 4),
    });
  }

  async start(extra: Record<string, string> = {}): Promise<ChildProcess> {
    const child = spawn(process.execPath, [join(__dirname, this.script)], {
      env: { ...process.env, ...this.env, ...extra },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    const ready = new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const event = JSON.parse(line) as ConsumerEvent;
        event.receivedAt = Date.now();
        this.events.push(event);
        this.arrivals.emit('event', event);
        if (event.type === 'ready') resolve();
        if (event.type === 'error') reject(new Error(line));
      });
      child.once('exit', (code) => reject(new Error(`consumer exited with ${code} before it was ready`)));
    });
    await ready;
    return child;
  }

  of(type: ConsumerEvent['type'], pid?: number): ConsumerEvent[] {
    return this.events.filter((e) => e.type === type && (pid === undefined || e.pid === pid));
  }

  /**
   * Resolves with the first event (already seen or arriving later) that matches, or
   * rejects after `timeoutMs`: an event-driven wait, no polling.
   */
  waitFor(
    match: (event: ConsumerEvent) => boolean,
    timeoutMs = 15_000,
    what = 'a matching consumer event',
  ): Promise<ConsumerEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onEvent = (event: ConsumerEvent) => {
        if (!match(event)) return;
        clearTimeout(timer);
        this.arrivals.off('event', onEvent);
        resolve(event);
      };
      const timer = setTimeout(() => {
        this.arrivals.off('event', onEvent);
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.arrivals.on('event', onEvent);
    });
  }

  /**
   * Waits until the processes reported `count` different ids starting with `idPrefix` as acked.
   * Redis is idle once the acks landed, but a consumer reports its ack a moment later: a test
   * that SIGKILLs its consumers when Redis is idle would otherwise lose reports of acks that
   * happened, and its ledger would see messages gone with no ack.
   */
  async waitForAcks(idPrefix: string, count: number, timeoutMs = 30_000): Promise<void> {
    const acked = new Set<string>();
    const counts = (event: ConsumerEvent) => {
      if (event.type === 'acked' && event.id?.startsWith(idPrefix)) acked.add(event.id);
      return acked.size >= count;
    };
    if (this.events.some(counts)) return;
    await this.waitFor(counts, timeoutMs, `${count} acks of ${idPrefix}* reported`);
  }

  /**
   * Waits until the last delivery of each of `ids` that a process started has its end reported
   * by that process (acked, dead, or a lost lease or settle error), or was made by a process that is gone (killed before it could
   * report: the ledger's faults explain those).
   * Redis is idle once the last ack ran, but its process reports it a moment later through its
   * pipe: a test that reads the reports at once would see a message gone with no ack. Returns
   * after `timeoutMs` in any case, leaving the verdict to the ledger's tally.
   */
  async waitForEndReports(ids: Iterable<string>, timeoutMs = 30_000): Promise<void> {
    const pending = new Set(ids);
    const settled = () => {
      // Each id's last delivery (its process and attempt), and whether that delivery's end came: the
      // end of an earlier one (a lost lease, say) does not tell that the last one's lines arrived.
      const last = new Map<string, { pid: number; attempt?: number; ended: boolean }>();
      for (const event of this.events) {
        if (!event.id || !pending.has(event.id)) continue;
        if (event.type === 'start') last.set(event.id, { pid: event.pid, attempt: event.attempt, ended: false });
        else if (REPORTED_ENDS.has(event.type)) {
          const delivery = last.get(event.id);
          if (delivery?.pid === event.pid && (event.attempt === undefined || event.attempt === delivery.attempt))
            delivery.ended = true;
        }
      }
      const running = new Set([...this.children].map((child) => child.pid));
      for (const id of pending) {
        const delivery = last.get(id);
        if (delivery === undefined || delivery.ended || !running.has(delivery.pid)) pending.delete(id);
      }
      return pending.size === 0;
    };
    const deadline = Date.now() + timeoutMs;
    while (!settled() && Date.now() < deadline) {
      // Event-driven: the next report (or a 100 ms tick, for a process that exits) runs the check again.
      await new Promise<void>((resolve) => {
        const next = () => {
          clearTimeout(tick);
          this.arrivals.off('event', next);
          resolve();
        };
        const tick = setTimeout(next, 100);
        this.arrivals.on('event', next);
      });
    }
  }

  /** The consumer processes still running (stopped ones included). */
  alive(): ChildProcess[] {
    return [...this.children];
  }

  /** Sends a signal without waiting for anything (SIGSTOP, SIGCONT). */
  signal(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }

  async kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // 'close', not 'exit': the lines the process wrote before it died are all read by then.
    const exited = new Promise((resolve) => child.once('close', resolve));
    child.kill(signal);
    await exited;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.children].map((child) => this.kill(child, 'SIGKILL')));
  }
}
