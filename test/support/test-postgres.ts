import { PostgresServer } from '../../support/postgres-processes/postgres-server';

/** The private PostgreSQL of a test file (see support/postgres-processes/postgres-server.ts). */
export { PostgresServer as TestPostgres };

/** Whether PostgreSQL's server binaries are installed (the outbox's tests need them). */
export function postgresInstalled(): boolean {
  try {
    PostgresServer.binDir();
    return true;
  } catch {
    return false;
  }
}

/**
 * describe() for a file that needs PostgreSQL: without it (a machine with only Node and
 * redis-server), its tests are skipped, saying why in their names. CI installs it (.ci/run).
 */
export const describeWithPostgres = (name: string, fn: () => void): void =>
  postgresInstalled()
    ? describe(name, fn)
    : describe.skip(`${name} [skipped: PostgreSQL is not installed (apt-get install -y postgresql)]`, fn);
