import { keySlot, partitionOf, partitionTags } from '../../lib/engine/keys/partitions';

describe('partitions', () => {
  it('computes the slot Redis Cluster computes (CLUSTER KEYSLOT reference values)', () => {
    // Values from the Redis Cluster specification and `CLUSTER KEYSLOT` on redis 7.
    expect(keySlot('123456789')).toBe(12739);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('ackq:orders')).toBe(11733);
    expect(keySlot('shop:orders.eu#0')).toBe(1968);
  });

  it('keeps the plain tag for one partition, so an unpartitioned topic keeps its keys', () => {
    expect(partitionTags('ackq', 'orders', 1)).toEqual(['ackq:orders']);
  });

  it.each([2, 3, 6, 16, 256])('puts each of %i partitions in its own equal slot range', (count) => {
    const tags = partitionTags('shop', 'orders.eu', count);
    expect(new Set(tags).size).toBe(count);
    tags.forEach((tag, i) => {
      expect(tag.startsWith(`shop:orders.eu#${i}`)).toBe(true);
      expect(Math.floor((keySlot(tag) * count) / 16384)).toBe(i);
    });
  });

  it('routes an id to the same partition every time, and spreads many ids evenly', () => {
    // Pinned values (FNV-1a of the id): producers of any version must agree on where an id
    // lives, or a second push of it lands in another partition and deduplication breaks.
    expect(partitionOf('order-7', 8)).toBe(3);
    expect(partitionOf('anything', 8)).toBe(7);
    expect(partitionOf('m-0', 4)).toBe(1);
    expect(partitionOf('anything', 1)).toBe(0);
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 8000; i++) counts[partitionOf(`id-${i}`, 8)]++;
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });
});
