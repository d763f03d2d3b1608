/** A partition's size in one state and the sort keys of its first rows, in its serving order (list-order.lua). */
export interface PartitionOrder {
  size: number;
  keys: number[];
}

/** How a page of partitions merged by sort key is read: each partition's order, then its rows. */
export interface MergedPageReads<R> {
  /** The partition's order: its size, and the keys of its first `count` rows (0: the size only). */
  order(partition: number, count: number): Promise<PartitionOrder>;
  /** `take` rows of the partition after its first `skip`, in its serving order. */
  rows(partition: number, skip: number, take: number): Promise<R[]>;
}

/**
 * Which partition each row of the page [offset, offset + limit) comes from, merging the
 * partitions by ascending key (each keeps its own order; ties go to the lower partition), and
 * how many rows of each come before the page.
 */
export function placePage(orders: PartitionOrder[], offset: number, limit: number) {
  const heads = orders.map(() => 0);
  const skipped = orders.map(() => 0);
  const sources: number[] = [];
  for (let row = 0; row < offset + limit; row++) {
    let best = -1;
    for (let p = 0; p < orders.length; p++) {
      if (heads[p] >= orders[p].keys.length) continue;
      if (best < 0 || orders[p].keys[heads[p]] < orders[best].keys[heads[best]]) best = p;
    }
    if (best < 0) break;
    heads[best]++;
    if (row < offset) skipped[best]++;
    else sources.push(best);
  }
  return { skipped, sources };
}

/**
 * A page of rows merged over partitions, at a cost bounded by the page: the sizes first (a
 * page past the end reads nothing more), then the sort keys of at most offset + limit rows
 * of each partition (never a body), then only the page's rows, one call per partition.
 */
export async function readMergedPage<R>(
  partitions: number,
  offset: number,
  limit: number,
  reads: MergedPageReads<R>,
): Promise<R[]> {
  const all = Array.from({ length: partitions }, (_, p) => p);
  const sizes = await Promise.all(all.map((p) => reads.order(p, 0)));
  if (offset >= sizes.reduce((total, order) => total + order.size, 0)) return [];
  const orders = await Promise.all(
    all.map((p) =>
      sizes[p].size === 0 ? Promise.resolve(sizes[p]) : reads.order(p, Math.min(sizes[p].size, offset + limit)),
    ),
  );
  const { skipped, sources } = placePage(orders, offset, limit);
  const taken = all.map((p) => sources.filter((source) => source === p).length);
  const pages = await Promise.all(
    all.map((p) => (taken[p] > 0 ? reads.rows(p, skipped[p], taken[p]) : Promise.resolve([]))),
  );
  // Rows that moved between the calls (acked, retried) leave their place empty.
  const next = all.map(() => 0);
  return sources.flatMap((p) => (next[p] < pages[p].length ? [pages[p][next[p]++]] : []));
}
