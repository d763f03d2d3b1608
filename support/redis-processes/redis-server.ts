import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { redisServerBinary } from './redis-binary';
import { answersPing, freePort } from './net-probe';

export interface RedisServerOptions {
  /** Append-only file with fsync on every write. Default off. */
  appendonly?: boolean;
  /** `requirepass` for the default user. */
  password?: string;
  /** Extra config directives, e.g. ['maxmemory', '2mb'] or ['user', 'alice on >pw ~ackq* +@all']. */
  config?: string[];
  /**
   * Run as a Sentinel (`redis-server <conf> --sentinel`) with these lines in its config file,
   * which Sentinel needs writable: it records what it learns there.
   */
  sentinel?: string[];
  /**
   * A cluster node: cluster-enabled, its cluster state in nodes.conf in its folder, announcing
   * 127.0.0.1, its bus on a free port of its own (the data port + 10000 may be taken or above 65535).
   */
  cluster?: boolean;
}

/** Every server this process started and has not stopped yet (paused ones too), for RedisServer.killAll(). */
const live = new Set<RedisServer>();

/**
 * A private, memory-only (unless `appendonly`) redis-server on a free port in a temporary folder:
 * tests and benchmarks may kill, restart, pause or reconfigure it without touching anything else.
 * Never the shared 6379.
 */
export class RedisServer {
  private process: ChildProcess | undefined;
  private readonly clients: Redis[] = [];
  private stopped = false;

  private constructor(
    readonly port: number,
    /** The cluster bus port (`cluster-port`) of a cluster node. */
    readonly busPort: number | undefined,
    readonly dir: string,
    private readonly options: RedisServerOptions,
  ) {
    live.add(this);
  }

  /**
   * Synchronous last resort for exit paths (Ctrl-C mid-start included): SIGKILLs every server this
   * process started and has not stopped, and removes its folder.
   */
  static killAll(): void {
    for (const server of live) server.killNow();
  }

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    for (let attempt = 1; ; attempt++) {
      const busPort = options.cluster ? await freePort() : undefined;
      const server = new RedisServer(await freePort(), busPort, mkdtempSync(join(tmpdir(), 'ackq-redis-')), options);
      try {
        await server.launch();
        return server;
      } catch (error) {
        // Leave no process or folder behind (one that never answered is still running).
        await server.stop();
        // Another process may have taken a port between the probe and the bind: try fresh ports.
        if (attempt === 3 || !(error as Error).message.includes('Address already in use')) throw error;
      }
    }
  }

  /** A URL for the default user, with the password when one is set. */
  get url(): string {
    const auth = this.options.password ? `:${encodeURIComponent(this.options.password)}@` : '';
    return `redis://${auth}127.0.0.1:${this.port}`;
  }

  /** A client for the test itself (inspection, faults); closed by stop(). */
  client(options: RedisOptions = {}): Redis {
    // A short disconnectTimeout: closing a client of a killed server otherwise holds a 2 s timer.
    const client = new Redis({
      port: this.port,
      host: '127.0.0.1',
      password: this.options.password,
      disconnectTimeout: 200,
      ...options,
    });
    this.clients.push(client);
    return client;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Up and not paused: it answers commands. */
  get running(): boolean {
    return this.process !== undefined && !this.stopped;
  }

  /** SIGSTOP: the process freezes with its sockets open, as a stalled host would. */
  pause(): void {
    this.process?.kill('SIGSTOP');
    this.stopped = this.process !== undefined;
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.process?.kill('SIGCONT');
    this.stopped = false;
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'redis.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /** Kills the server (SIGKILL by default: no shutdown save) and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
    this.process = undefined;
    this.stopped = false;
  }

  /** Starts it again on the same port and folder (an AOF, if on, is loaded back). */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  /** Kills the server (SIGKILL), keeps it down for `downMs`, then starts it again as restart() does. */
  async restartAfter(downMs: number): Promise<void> {
    await this.kill();
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.launch();
  }

  async stop(): Promise<void> {
    this.clients.forEach((client) => client.disconnect());
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
    live.delete(this);
  }

  /** SIGKILL without waiting, then removes the folder: for killAll() on the way out. */
  private killNow(): void {
    if (this.process && this.process.exitCode === null && this.process.signalCode === null)
      this.process.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
    live.delete(this);
  }

  private async launch(): Promise<void> {
    const { appendonly = false, password, config = [], sentinel, cluster } = this.options;
    const args = [
      ...(sentinel ? [this.sentinelConfig(sentinel), '--sentinel'] : []),
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      appendonly ? 'yes' : 'no',
      '--appendfsync',
      'always',
      '--logfile',
      'redis.log',
      '--daemonize',
      'no',
      ...(password ? ['--requirepass', password] : []),
      ...(cluster
        ? [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-announce-ip',
            '127.0.0.1',
            '--cluster-port',
            String(this.busPort),
          ]
        : []),
    ];
    for (let i = 0; i < config.length; i += 2) args.push(`--${config[i]}`, config[i + 1]);
    // stderr: a bad config directive is reported there, before the log file opens.
    const child = spawn(redisServerBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    this.process = child;
    await this.waitUntilUp(child, () => stderr);
  }

  /** Written once: a restarted Sentinel reads back what it had learned. */
  private sentinelConfig(lines: string[]): string {
    const file = join(this.dir, 'sentinel.conf');
    if (!existsSync(file)) writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  }

  private async waitUntilUp(child: ChildProcess, stderr: () => string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited at start:\n${stderr()}${this.log().slice(-2000)}`);
      if (await answersPing(this.port)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`redis-server did not come up on port ${this.port}:\n${this.log().slice(-2000)}`);
  }
}
