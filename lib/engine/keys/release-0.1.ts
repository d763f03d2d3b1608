import { dataMarkerKey, scheduleIndexKeys, topicIndexKeys } from './queue-keys';

/**
 * What the TypeScript side keeps only so that the data and processes of release 0.1.x keep
 * working beside this one (docs/upgrading.md: every release reads what an older one left, and
 * runs beside it in a rolling deploy). It can go in 1.0, the first release allowed to stop
 * reading 0.1.x data: drop this file, and the places that import it with it. The 0.1.x keys the
 * scripts still clean (`groupQueue`, `rateWindows`), the reserve's compact flag (see StoredFormat)
 * and the dead letter without `m` (lookup-format.ts) are named where they are used.
 */

/**
 * The keys that say a release before the stored format (0.1.x) used this prefix: found at the
 * first connect without a stored format, the prefix stays JSON, the form 0.1.x reads.
 */
export function release01UsedKeys(prefix: string): string[] {
  return [dataMarkerKey(prefix), topicIndexKeys(prefix).topicIndex, scheduleIndexKeys(prefix).scheduleTopics];
}

/**
 * The topic registry and schedule index of a prefix with ':' as 0.1.x spelled it (unescaped):
 * found, its messages are out of this release's sight. Empty for a prefix without ':', whose
 * layout did not change.
 */
export function release01UnescapedKeys(prefix: string): string[] {
  if (!prefix.includes(':')) return [];
  return [topicIndexKeys(prefix).topicIndex, scheduleIndexKeys(prefix).scheduleTopics];
}
