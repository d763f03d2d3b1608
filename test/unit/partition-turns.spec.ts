import { PartitionTurns } from '../../lib/consumer/partition-turns';

const turnsOf = (turns: PartitionTurns, n: number) => Array.from({ length: n }, () => turns.next());

describe('PartitionTurns', () => {
  let now: number;

  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });

  afterEach(() => jest.restoreAllMocks());

  it('goes round robin over every partition', () => {
    expect(turnsOf(new PartitionTurns(3), 7)).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('skips partitions that came back short, and reports no wait while one still has work', () => {
    const turns = new PartitionTurns(4);
    expect(turns.report(1, true, -1)).toBeUndefined();
    expect(turns.report(3, true, 50)).toBeUndefined();
    expect(turnsOf(turns, 5)).toEqual([0, 2, 0, 2, 0]);
    // A partition that came back full takes turns again.
    expect(turns.report(1, false, -1)).toBeUndefined();
    expect(turnsOf(turns, 3)).toEqual([1, 2, 0]);
  });

  it('reports the earliest due time as the wait once every partition is empty', () => {
    const turns = new PartitionTurns(3);
    turns.report(0, true, 500);
    now += 30;
    turns.report(1, true, 100);
    now += 20;
    // Due at +500 (from t0) and +130: the earliest is 80 ms away now; partition 2 has nothing scheduled.
    expect(turns.report(2, true, -1)).toEqual({ nextDueInMs: 80 });
  });

  it('reports -1 when nothing is scheduled, and 0 when something is already due', () => {
    const single = new PartitionTurns(1);
    expect(turnsOf(single, 3)).toEqual([0, 0, 0]);
    expect(single.report(0, true, -1)).toEqual({ nextDueInMs: -1 });
    expect(single.report(0, true, 40)).toEqual({ nextDueInMs: 40 });
    const turns = new PartitionTurns(2);
    turns.report(0, true, 10);
    now += 25;
    expect(turns.report(1, true, -1)).toEqual({ nextDueInMs: 0 });
  });

  it('still takes turns when all are empty, and reset() lets every partition take its turn again', () => {
    const turns = new PartitionTurns(3);
    turns.next();
    for (const partition of [0, 1, 2]) turns.report(partition, true, -1);
    expect(turnsOf(turns, 3)).toEqual([1, 2, 0]);
    turns.reset();
    expect(turns.report(0, true, -1)).toBeUndefined();
    expect(turnsOf(turns, 4)).toEqual([1, 2, 1, 2]);
  });
});
