import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../lib/testing/redis-probe';

/**
 * A private PostgreSQL for one benchmark run (as test/support/test-postgres.ts, which the bench
 * cannot import: it uses jest's describe): initdb in a temp folder, a free port of 127.0.0.1,
 * trust auth for `postgres`, fsync off, pg_stat_statements loaded. As root it runs as `postgres`.
 */
export class BenchPostgres {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<BenchPostgres> {
    const bin = binDir();
    const dir = mkdtempSync(join(tmpdir(), 'ackq-bench-pg-'));
    const port = await freePort();
    const asOwner = (binary: string): [string, string[]] =>
      process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', join(bin, binary)]] : [join(bin, binary), []];
    const run = (binary: string, args: string[]) => {
      const [command, prefix] = asOwner(binary);
      execFileSync(command, [...prefix, ...args], { stdio: 'pipe' });
    };
    if (process.getuid?.() === 0) {
      const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
      chownSync(dir, id('-u'), id('-g'));
    }
    const data = join(dir, 'data');
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const [command, prefix] = asOwner('postgres');
    const child = spawn(
      command,
      [
        ...prefix,
        ...['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir],
        ...['-c', 'fsync=off', '-c', 'max_connections=200', '-c', 'shared_preload_libraries=pg_stat_statements'],
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; ; i++) {
      try {
        run('pg_isready', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-q']);
        break;
      } catch (error) {
        if (i > 600 || child.exitCode !== null) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return new BenchPostgres(child, dir, port);
  }

  /** A connection URL as `role` (database `postgres`). */
  urlAs(role = 'postgres'): string {
    return `postgres://${role}@127.0.0.1:${this.port}/postgres`;
  }

  /** Stops the server (fast shutdown) and removes its folder. */
  async stop(): Promise<void> {
    // Signalled itself (runuser does not pass SIGINT on); it removes postmaster.pid last.
    const pidFile = join(this.dir, 'data', 'postmaster.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
    const signal = (name: NodeJS.Signals) => {
      try {
        if (pid) process.kill(pid, name);
      } catch {
        // Already gone.
      }
    };
    signal('SIGINT');
    for (let i = 0; existsSync(pidFile) && i <= 120; i++) {
      if (i === 100) signal('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    this.child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function binDir(): string {
  const dirs = process.env.POSTGRES_BIN_DIR
    ? [process.env.POSTGRES_BIN_DIR]
    : ['18', '17', '16', '15', '14'].map((version) => `/usr/lib/postgresql/${version}/bin`);
  const found = dirs.find((dir) => existsSync(join(dir, 'postgres')));
  if (!found) throw new Error('PostgreSQL 14+ is not installed: apt-get install postgresql (or set POSTGRES_BIN_DIR)');
  return found;
}
