import { MissingPeerDependencyError } from '../errors';

/**
 * Loads an optional peer dependency when a feature that needs it is switched on, never at
 * import: the package works without them. A missing one fails with a text that names it.
 */
export function requirePeer<T>(
  name:
    | 'prom-client'
    | '@opentelemetry/api'
    | '@nestjs/terminus'
    | '@nestjs/microservices'
    | 'pg'
    | 'drizzle-orm'
    | 'kysely',
  feature: string,
): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'MODULE_NOT_FOUND')
      throw new MissingPeerDependencyError(name, feature, { cause: error });
    throw error;
  }
}
