import { placePage, readMergedPage, type PartitionOrder } from '../../lib/engine/codecs/merged-pages';

/** Partitions as lists of sort keys in their own serving order; a row is `<partition>:<position>`. */
function reads(partitions: number[][]) {
  const calls: string[] = [];
  return {
    calls,
    order: (p: number, count: number): Promise<PartitionOrder> => {
      calls.push(`order ${p} ${count}`);
      return Promise.resolve({ size: partitions[p].length, keys: partitions[p].slice(0, count) });
    },
    rows: (p: number, skip: number, take: number): Promise<string[]> => {
      calls.push(`rows ${p} ${skip} ${take}`);
      return Promise.resolve(partitions[p].slice(skip, skip + take).map((_, i) => `${p}:${skip + i}`));
    },
  };
}

describe('a page merged over partitions', () => {
  it('merges by key, each partition in its own order, ties to the lower partition', () => {
    const orders = [
      [1, 4, 4],
      [2, 4],
      [0, 9],
    ].map((keys) => ({ size: keys.length, keys }));
    expect(placePage(orders, 0, 10)).toEqual({ skipped: [0, 0, 0], sources: [2, 0, 1, 0, 0, 1, 2] });
    expect(placePage(orders, 2, 3)).toEqual({ skipped: [1, 0, 1], sources: [1, 0, 0] });
    // A partition whose keys do not ascend keeps its order: 5 is not taken before 3.
    expect(
      placePage(
        [
          { size: 2, keys: [5, 3] },
          { size: 1, keys: [4] },
        ],
        0,
        3,
      ).sources,
    ).toEqual([1, 0, 0]);
  });

  it('reads only the sizes for a page past the end', async () => {
    const parts = reads([[1, 2], [3], []]);
    expect(await readMergedPage(3, 3, 50, parts)).toEqual([]);
    expect(parts.calls).toEqual(['order 0 0', 'order 1 0', 'order 2 0']);
  });

  it('reads at most offset + limit keys of each partition, and only the rows of the page', async () => {
    const parts = reads([[1, 3, 5, 7, 9], [2, 4, 6, 8], []]);
    expect(await readMergedPage(3, 4, 3, parts)).toEqual(['0:2', '1:2', '0:3']);
    expect(parts.calls.filter((call) => !call.endsWith(' 0'))).toEqual([
      'order 0 5',
      'order 1 4',
      'rows 0 2 2',
      'rows 1 2 1',
    ]);
  });

  it('leaves out rows that left their partition between the calls', async () => {
    const parts = reads([[1, 3], [2]]);
    const rows = parts.rows;
    parts.rows = (p, skip, take) => (p === 1 ? Promise.resolve([]) : rows(p, skip, take));
    expect(await readMergedPage(2, 0, 3, parts)).toEqual(['0:0', '0:1']);
  });
});
