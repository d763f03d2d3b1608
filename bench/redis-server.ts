import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A private, memory-only redis-server on a free port in a temp folder. Never the shared 6379. */
export class BenchRedis {
  /** The benchmark's own connection: INFO, FLUSHALL, CONFIG RESETSTAT. */
  readonly admin: Redis;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {
    this.admin = new Redis({ port, host: '127.0.0.1', lazyConnect: false });
  }

  static async start(): Promise<BenchRedis> {
    const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'ackq-bench-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
    const child = spawn(binary, [...args, '--logfile', 'redis.log', '--daemonize', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${binary} exited at start (see ${dir}/redis.log)`);
      if (await answers(port)) break;
      if (Date.now() > deadline) throw new Error(`${binary} did not come up on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return new BenchRedis(port, dir, child);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  version(): string {
    const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    return /v=([\d.]+)/.exec(execFileSync(binary, ['--version']).toString())?.[1] ?? 'unknown';
  }

  /** One numeric field of INFO <section>. */
  async info(section: string, field: string): Promise<number> {
    const text = await this.admin.info(section);
    return Number(new RegExp(`^${field}:(\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  }

  /** CPU seconds the server has used (user + system, main thread and children). */
  async cpuSeconds(): Promise<number> {
    const text = await this.admin.info('cpu');
    let total = 0;
    for (const match of text.matchAll(/^used_cpu_(?:user|sys)(?:_children)?:([\d.]+)/gm)) total += Number(match[1]);
    return total;
  }

  /** INFO commandstats as command -> calls. */
  async commandCalls(): Promise<Map<string, number>> {
    const text = await this.admin.info('commandstats');
    const calls = new Map<string, number>();
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
    return calls;
  }

  async stop(): Promise<void> {
    this.admin.disconnect();
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether a redis-server answers PING on this port. */
export function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    client.on('error', () => undefined);
    client
      .connect()
      .then(() => client.ping())
      .then(
        () => resolve(true),
        () => resolve(false),
      )
      .finally(() => client.disconnect());
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
