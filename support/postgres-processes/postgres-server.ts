import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../redis-processes/net-probe';

/**
 * A private PostgreSQL for one test file or benchmark run: initdb in a temp folder, postgres on a free port of
 * 127.0.0.1 (never 5432), trust auth for user `postgres`. Tests may kill it (SIGKILL, as a crash)
 * and start it again on the same folder and port. As root, the server runs as the `postgres`
 * user (setpriv), which initdb and postgres require.
 */
export class PostgresServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly settings: Record<string, string>,
  ) {}

  /** Where the binaries are: POSTGRES_BIN_DIR, else Debian's newest /usr/lib/postgresql/<n>/bin. */
  static binDir(): string {
    if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
    for (const version of ['17', '16', '15', '14']) {
      const dir = `/usr/lib/postgresql/${version}/bin`;
      if (existsSync(join(dir, 'postgres'))) return dir;
    }
    throw new Error('PostgreSQL 14+ is not installed: apt-get install postgresql (or set POSTGRES_BIN_DIR)');
  }

  /**
   * A new cluster, started and answering.
   * @param settings - More server settings (`-c name=value`), such as `shared_preload_libraries`.
   */
  static async start(settings: Record<string, string> = {}): Promise<PostgresServer> {
    const dir = mkdtempSync(join(tmpdir(), 'ackq-pg-'));
    const server = new PostgresServer(dir, await freePort(), settings);
    if (process.getuid?.() === 0) chownSync(dir, ...postgresIds());
    server.run('initdb', ['-D', server.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await server.resume();
    return server;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** A connection URL for `pg`, TypeORM, Prisma... (database `postgres`). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** A connection URL as `role` (database `postgres`): the benchmark tells the writer's statements from the relay's by role. */
  urlAs(role = 'postgres'): string {
    return `postgres://${role}@127.0.0.1:${this.port}/postgres`;
  }

  /** `pg` Pool options for the same. */
  get poolOptions(): { host: string; port: number; user: string; database: string } {
    return { host: '127.0.0.1', port: this.port, user: 'postgres', database: 'postgres' };
  }

  /**
   * Starts the server on its folder and port (again, after kill()), and waits until it accepts
   * connections. After a kill the old server's backends may still hold its shared memory for a
   * moment: a start refused so is tried again.
   */
  async resume(): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const failure = await this.startOnce(deadline);
      if (failure === undefined) return;
      if (Date.now() > deadline) throw new Error(`postgres did not start within 60 s: ${failure}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** One start: undefined once it answers, else why it exited. */
  private async startOnce(deadline: number): Promise<string | undefined> {
    const args = [
      ...['-D', this.dataDir, '-p', String(this.port), '-h', '127.0.0.1', '-k', this.dir],
      // Durable across a killed server (the fault tests' crash); only an OS crash could lose data.
      ...['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
      ...Object.entries(this.settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ];
    const [command, prefix] = this.asOwner(join(PostgresServer.binDir(), 'postgres'));
    const child = spawn(command, [...prefix, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) return log || 'exited';
      try {
        this.run('pg_isready', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-q']);
        return undefined;
      } catch {
        if (Date.now() > deadline) throw new Error(`postgres did not answer within 60 s: ${log}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** SIGKILL: a crash. Every connection breaks; committed transactions survive. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops the server and removes its folder. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const within = (ms: number) => Promise.race([exited, new Promise((resolve) => setTimeout(resolve, ms))]);
      const running = () => child.exitCode === null && child.signalCode === null;
      // A smart shutdown first: it waits for the clients still connected (a library's pool that
      // ends a moment after its close resolved) instead of sending them a FATAL error, which a pg
      // client without an 'error' listener turns into an unhandled error. Then fast, then killed.
      child.kill('SIGTERM');
      await within(5_000);
      if (running()) child.kill('SIGINT');
      if (running()) await within(10_000);
      if (running()) child.kill('SIGKILL');
    }
    // The backends may still hold the pipe after the postmaster exits: Jest would wait on it.
    child?.stderr?.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs a client binary (psql, pg_isready...) as the server's owner. */
  private run(binary: string, args: string[], ignoreFailure = false): void {
    const [command, prefix] = this.asOwner(join(PostgresServer.binDir(), binary));
    try {
      execFileSync(command, [...prefix, ...args], { stdio: 'pipe' });
    } catch (error) {
      if (!ignoreFailure) throw error;
    }
  }

  /**
   * The command line that runs `command` as the server's owner: as root, through setpriv, which
   * execs it as `postgres` (no process in between, so a signal sent to the child reaches the
   * server itself: a SIGKILL is a real crash).
   */
  private asOwner(command: string): [string, string[]] {
    return process.getuid?.() === 0
      ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', command]]
      : [command, []];
  }
}

function postgresIds(): [number, number] {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return [uid, gid];
}
