import type { ClientOp, HistoryOp } from './history-op';

/** Every this many confirmed acks, a `:read` of the set acked so far. */
const ACKS_PER_READ = 20;
/** The process number of the reads. */
const READER = 0;
/** The producer's first process number: as in Jepsen, a process whose op ended `:info` is gone, and the producer goes on as the next number. */
const FIRST_PRODUCER = 1;

/**
 * The history as Jepsen's `set-full` checker reads it (`elle-cli --model set-full`), in EDN, one op a
 * line: each push is an `:add` of the message's number (its integer suffix); `:read` ops carry the set
 * of ids acked so far (a message is in the set once its handling is durable), the last one every id
 * acked, or delivered and gone from Redis, at the end. Deliveries and faults are left out: the model
 * knows only adds and reads. A push retried with the same id is an `:add` of the same element again.
 * Times are nanoseconds from the first op.
 */
export function toSetFullEdn(history: readonly HistoryOp[]): string {
  const start = history[0]?.time ?? 0;
  const nanos = (op: HistoryOp) => Math.max(0, Math.round((op.time - start) * 1000));
  const lines: string[] = [];
  const acked = new Set<number>();
  const delivered = new Set<number>();
  let index = 0;
  let acksSinceRead = 0;
  let producer = FIRST_PRODUCER;
  const read = (time: number, value: Iterable<number>) => {
    lines.push(`{:type :invoke, :f :read, :value nil, :process ${READER}, :time ${time}, :index ${index++}}`);
    const set = [...value].sort((a, b) => a - b).join(' ');
    lines.push(`{:type :ok, :f :read, :value #{${set}}, :process ${READER}, :time ${time}, :index ${index++}}`);
  };
  for (const op of history) {
    if (op.f === 'push') {
      lines.push(
        `{:type :${op.type}, :f :add, :value ${elementOf(op)}, :process ${producer}, :time ${nanos(op)}, :index ${index++}}`,
      );
      if (op.type === 'info') producer++;
    } else if (op.f === 'deliver') delivered.add(elementOf(op));
    else if (op.f === 'ack' && op.type === 'ok') {
      acked.add(elementOf(op));
      if (++acksSinceRead === ACKS_PER_READ) {
        acksSinceRead = 0;
        read(nanos(op), acked);
      }
    } else if (op.f === 'final-read') {
      const stored = new Set(op.stored.map(elementOfId));
      read(nanos(op), new Set([...acked, ...[...delivered].filter((n) => !stored.has(n))]));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The integer of a message id `<prefix>-<n>`. */
function elementOf(op: ClientOp): number {
  return elementOfId(op.id);
}

function elementOfId(id: string): number {
  const match = /(\d+)$/.exec(id);
  if (!match) throw new Error(`message id ${id} has no integer suffix for set-full`);
  return Number(match[1]);
}
