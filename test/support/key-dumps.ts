import { mastersOf, type TestClient } from './queue-fixture';

/**
 * The keys matching `*<prefix>*` whose DUMP holds `canary`, over every master. Start the server
 * with `rdbcompression no`: else DUMP may LZF-compress a stored text, and a canary in it may not
 * show as it is.
 */
export async function keysHolding(redis: TestClient, prefix: string, canary: string): Promise<string[]> {
  const found: string[] = [];
  const needle = Buffer.from(canary);
  for (const node of await mastersOf(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const name of keys) {
        const dump = await node.dumpBuffer(name);
        if (dump?.includes(needle)) found.push(name);
      }
    } while (cursor !== '0');
  }
  return found;
}
