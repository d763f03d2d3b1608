import { createRequire } from 'node:module';
import { join } from 'node:path';
import { OutboxDriverMissingError } from '../../errors';

/**
 * Loads a library an adapter needs (`drizzle-orm`, `kysely`) when it first writes, never at
 * import: from this package's place first, else from the app's (its working directory), where
 * a package installed next to the app but not hoisted is found.
 * @throws {OutboxDriverMissingError} when neither finds it.
 */
export function loadOutboxPeer<T>(name: string): T {
  for (const load of [require, createRequire(join(process.cwd(), 'outbox-peer.js'))]) {
    try {
      return load(name) as T;
    } catch (error) {
      if ((error as { code?: string }).code !== 'MODULE_NOT_FOUND') throw error;
    }
  }
  throw new OutboxDriverMissingError(name);
}
