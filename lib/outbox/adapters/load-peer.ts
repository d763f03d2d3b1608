import { createRequire } from 'node:module';
import { join } from 'node:path';
import { MissingPeerDependencyError } from '../../errors';
import { requirePeer } from '../../observability/optional-peer';

/**
 * Loads a library an adapter needs (`drizzle-orm`, `kysely`) when it first writes, never at
 * import: from this package's place first, else from the app's (its working directory), where
 * a package installed next to the app but not hoisted is found.
 * @throws {MissingPeerDependencyError} when neither finds it.
 */
export function loadOutboxPeer<T>(name: 'drizzle-orm' | 'kysely', feature: string): T {
  try {
    return requirePeer<T>(name, feature);
  } catch (error) {
    if (!(error instanceof MissingPeerDependencyError)) throw error;
    try {
      return createRequire(join(process.cwd(), 'outbox-peer.js'))(name) as T;
    } catch {
      throw error;
    }
  }
}
