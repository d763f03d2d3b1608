/** Redis Cluster's slot count: a key's slot is CRC16 of its hash tag modulo this. */
const SLOTS = 16384;

/** The CRC16 (XMODEM) that Redis Cluster maps a hash tag to a slot with. */
export function keySlot(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}

/**
 * The hash tags of a topic's `count` partitions (without braces). One partition keeps the
 * plain `<prefix>:<topic>` tag. With more, partition i gets `<prefix>:<topic>#i` plus the
 * first suffix `.k` that puts it in the i-th of `count` equal slot ranges: a cluster whose
 * masters own equal contiguous ranges (what `redis-cli --cluster create` makes) then serves
 * the partitions from every master, not from wherever plain hashing happens to land.
 */
export function partitionTags(prefix: string, topic: string, count: number): string[] {
  const base = `${prefix}:${topic}`;
  if (count === 1) return [base];
  const tags: string[] = [];
  for (let i = 0; i < count; i++) {
    for (let k = 0; ; k++) {
      const tag = `${base}#${i}${k === 0 ? '' : `.${k}`}`;
      if (Math.floor((keySlot(tag) * count) / SLOTS) === i) {
        tags.push(tag);
        break;
      }
    }
  }
  return tags;
}

/**
 * The partition of a message: FNV-1a of its id, so every push of one id reaches the same
 * partition and deduplication by id holds across partitions.
 */
export function partitionOf(id: string, count: number): number {
  if (count === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/**
 * `id`, plus `#<k>` when needed to route it to `partition`: how a message whose place is chosen by
 * something else (a schedule's first partition, a push key's) keeps being routed by its id.
 */
export function idInPartition(id: string, partition: number, count: number): string {
  if (partitionOf(id, count) === partition) return id;
  for (let k = 1; ; k++) if (partitionOf(`${id}#${k}`, count) === partition) return `${id}#${k}`;
}
