import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { ConsumerEvent } from '../../support/consumer-processes';
import { toSetFullEdn } from './elle-set-full';
import type { FaultKind, HistoryOp, UnindexedOp } from './history-op';

type Untimed<T> = T extends unknown ? Omit<T, 'time'> : never;

/**
 * Records a fault run as a history. Every process of the run shares this host's wall clock, so one
 * TIME read at the start gives the offset from it to the Redis server's clock; each op's time is its
 * process' Date.now() (a consumer's `now`) moved by that offset, in microseconds.
 */
export class HistoryRecorder {
  private readonly ops: UnindexedOp[] = [];
  private offsetUs = 0;

  /** One TIME read, its answer taken as the clock at the middle of the round trip. */
  async syncClock(redis: Redis): Promise<void> {
    const before = Date.now();
    const [seconds, micros] = await redis.time();
    const after = Date.now();
    this.offsetUs = Number(seconds) * 1_000_000 + Number(micros) - ((before + after) / 2) * 1000;
  }

  /** The Redis server's clock now, in microseconds. */
  now(at = Date.now()): number {
    return Math.round(at * 1000 + this.offsetUs);
  }

  record(op: Untimed<UnindexedOp>, at = Date.now()): void {
    this.ops.push({ ...op, time: this.now(at) });
  }

  fault(kind: FaultKind, details: Record<string, unknown> = {}): void {
    this.record({ type: 'info', f: 'fault', process: 'nemesis', kind, ...details });
  }

  /**
   * The lines of consumer processes (test/support/consumer-process.js): a handler start is a
   * delivery, an `acked` an ack ok; a lost lease, a failed ack and a dead letter are faults the
   * library reported.
   */
  fromConsumers(events: readonly ConsumerEvent[]): void {
    for (const event of events) {
      if (!event.id) continue;
      const at = event.now ?? event.receivedAt ?? Date.now();
      const process = `pid:${event.pid}`;
      const { id, attempt, pid } = event;
      if (event.type === 'start') this.record({ type: 'ok', f: 'deliver', process, id, attempt }, at);
      else if (event.type === 'acked') this.record({ type: 'ok', f: 'ack', process, id, attempt }, at);
      else if (event.type === 'lease-lost')
        this.record({ type: 'info', f: 'fault', process, kind: 'lease-expired', pid, id, attempt }, at);
      else if (event.type === 'queue-error')
        this.record({ type: 'info', f: 'fault', process, kind: 'ack-failed', pid, id, attempt }, at);
      else if (event.type === 'dead')
        this.record({ type: 'info', f: 'fault', process, kind: 'dead-lettered', pid, id, attempt }, at);
    }
  }

  /** The ops in time order (recording order among equal times), numbered. */
  history(): HistoryOp[] {
    return this.ops
      .map((op, order) => ({ op, order, time: op.time as number }))
      .sort((a, b) => a.time - b.time || a.order - b.order)
      .map(({ op }, index) => ({ ...op, index }) as HistoryOp);
  }

  /** Writes `<name>.history.jsonl` (one op a line) and `<name>.set-full.edn` into `dir`; returns their paths. */
  write(dir: string, name: string, history = this.history()): { jsonl: string; edn: string } {
    const jsonl = join(dir, `${name}.history.jsonl`);
    const edn = join(dir, `${name}.set-full.edn`);
    writeFileSync(jsonl, history.map((op) => JSON.stringify(op)).join('\n') + '\n');
    writeFileSync(edn, toSetFullEdn(history));
    return { jsonl, edn };
  }
}
