/**
 * An object without a prototype, for the answers whose keys users name (topics, ids, step and
 * group names): there `__proto__`, `constructor` or `toString` is a key like any other, so no
 * name is lost and none writes into Object.prototype.
 */
export function userKeyed<V>(entries: Iterable<readonly [string, V]> = []): Record<string, V> {
  const record = Object.create(null) as Record<string, V>;
  for (const [key, value] of entries) record[key] = value;
  return record;
}
