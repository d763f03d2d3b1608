import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';

const logger = new Logger('SamplePostgres');

/**
 * Where the sample's outbox demo finds PostgreSQL: DATABASE_URL if set (`off` turns the demo
 * off), else a private server started here (initdb in a temp folder, a free port) and stopped
 * when the app exits. Without PostgreSQL installed the demo is off: `url` is undefined and the
 * rest of the sample runs as before.
 */
export async function resolvePostgres(): Promise<{ url: string | undefined; stop: () => Promise<void> }> {
  const given = process.env.DATABASE_URL;
  if (given === 'off') return { url: undefined, stop: () => Promise.resolve() };
  if (given) return { url: given, stop: () => Promise.resolve() };
  const bin = postgresBinDir();
  if (!bin) {
    logger.warn(
      'PostgreSQL is not installed (no postgres under /usr/lib/postgresql/<n>/bin; set POSTGRES_BIN_DIR or ' +
        'DATABASE_URL): the outbox demo (POST /placed-orders) is off',
    );
    return { url: undefined, stop: () => Promise.resolve() };
  }
  try {
    return await startPrivatePostgres(bin);
  } catch (error) {
    logger.warn(`Cannot start PostgreSQL (${(error as Error).message.split('\n')[0]}): the outbox demo is off`);
    return { url: undefined, stop: () => Promise.resolve() };
  }
}

/** POSTGRES_BIN_DIR, else Debian's newest /usr/lib/postgresql/<n>/bin; none when it has no `postgres`. */
function postgresBinDir(): string | undefined {
  const dirs = process.env.POSTGRES_BIN_DIR
    ? [process.env.POSTGRES_BIN_DIR]
    : ['18', '17', '16', '15', '14'].map((version) => `/usr/lib/postgresql/${version}/bin`);
  return dirs.find((dir) => existsSync(join(dir, 'postgres')));
}

async function startPrivatePostgres(bin: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ackq-sample-pg-'));
  const data = join(dir, 'data');
  // initdb and postgres refuse to run as root: as root they run as the `postgres` user.
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
  let child: ChildProcess | undefined;
  // A fast shutdown (SIGINT) sent to the server itself (runuser does not pass SIGINT on), which
  // removes postmaster.pid last; then the folder goes. A server that hangs is killed after 10 s.
  const stop = async () => {
    const pidFile = join(data, 'postmaster.pid');
    const serverPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined;
    const signal = (name: NodeJS.Signals) => {
      try {
        if (serverPid) process.kill(serverPid, name);
      } catch {
        // Already gone.
      }
    };
    signal('SIGINT');
    for (let i = 0; existsSync(pidFile); i++) {
      if (i === 100) signal('SIGKILL');
      if (i > 120) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const [command, prefix] = asOwner('postgres');
    const args = ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off'];
    child = spawn(command, [...prefix, ...args], { stdio: 'ignore' });
    for (let i = 0; ; i++) {
      try {
        run('pg_isready', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-q']);
        break;
      } catch (error) {
        if (i > 300 || child.exitCode !== null) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  logger.log(`Started a private PostgreSQL on port ${port} for the outbox demo (stops with the app)`);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
