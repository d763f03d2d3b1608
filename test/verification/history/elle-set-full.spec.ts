import { toSetFullEdn } from './elle-set-full';
import type { HistoryOp } from './history-op';

describe('set-full export (EDN for elle-cli --model set-full)', () => {
  const ops: HistoryOp[] = [
    { index: 0, time: 1_000, type: 'invoke', f: 'push', process: 'producer', id: 'm1-00007', attempt: 1 },
    { index: 1, time: 2_000, type: 'info', f: 'push', process: 'producer', id: 'm1-00007', attempt: 1 },
    { index: 2, time: 3_000, type: 'invoke', f: 'push', process: 'producer', id: 'm1-00007', attempt: 2 },
    { index: 3, time: 4_000, type: 'ok', f: 'push', process: 'producer', id: 'm1-00007', attempt: 2, duplicate: true },
    { index: 4, time: 5_000, type: 'ok', f: 'deliver', process: 'pid:42', id: 'm1-00007', attempt: 1 },
    { index: 5, time: 6_000, type: 'info', f: 'fault', process: 'nemesis', kind: 'kill-consumer', pid: 42 },
    { index: 6, time: 7_000, type: 'ok', f: 'final-read', process: 'nemesis', stored: [] },
  ];

  it('writes each push as an :add of its integer, a new process after an :info, and a final :read', () => {
    expect(toSetFullEdn(ops).trim().split('\n')).toEqual([
      '{:type :invoke, :f :add, :value 7, :process 1, :time 0, :index 0}',
      '{:type :info, :f :add, :value 7, :process 1, :time 1000000, :index 1}',
      '{:type :invoke, :f :add, :value 7, :process 2, :time 2000000, :index 2}',
      '{:type :ok, :f :add, :value 7, :process 2, :time 3000000, :index 3}',
      // Delivered, and gone from Redis at the end: its ack ran though its process died before reporting it.
      '{:type :invoke, :f :read, :value nil, :process 0, :time 6000000, :index 4}',
      '{:type :ok, :f :read, :value #{7}, :process 0, :time 6000000, :index 5}',
    ]);
  });
});
