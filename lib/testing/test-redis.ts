import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { RedisUnavailableError } from '../errors';
import { TestRedisStartError } from '../errors/test-redis.errors';
import { forget, killOnExit } from './exit-cleanup';
import { freePort, sendCommand } from './redis-probe';
import { findServerBinary } from './server-binary';
import { makeServerFolder, reapOrphanedServers } from './server-folders';

/** Options of {@link startTestRedis}. */
export interface TestRedisOptions {
  /**
   * The server binary: a path, or a name looked up on the PATH.
   * @defaultValue `REDIS_SERVER_BIN`, else `redis-server`, else `valkey-server` on the PATH
   */
  binary?: string;
  /** More server arguments, e.g. `['--maxmemory', '64mb']`. */
  args?: string[];
  /**
   * How long startup waits for the server to answer (ms).
   * @defaultValue `20_000`
   */
  startTimeoutMs?: number;
}

/** A private Redis (or Valkey) server started by {@link startTestRedis}. */
export interface TestRedis {
  /** Its URL, `redis://127.0.0.1:<port>`: pass it as the queue's `connection`. */
  readonly url: string;
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number;
  /** The binary that runs it. */
  readonly binary: string;
  /** Its temporary folder (log file, owner marker), removed by `stop()`. */
  readonly dir: string;
  /**
   * Deletes every key (`FLUSHALL`), e.g. between tests that share the server.
   * @throws {RedisUnavailableError} when the server does not answer (stopped, or killed).
   */
  flush(): Promise<void>;
  /**
   * Kills the server, waits until it is gone (its port free) and removes its folder; later calls do
   * nothing. The wait keeps the process alive, so a script's `await redis.stop()` settles.
   */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const FLUSH_TIMEOUT_MS = 10_000;

/**
 * Starts a private Redis (or Valkey) server for a test: from the local binary, on a free port of
 * 127.0.0.1, in a temporary folder, with no persistence (no RDB snapshot, no AOF). Resolves once
 * it answers PING. It is killed when the process exits (or gets SIGINT, SIGTERM or SIGHUP)
 * without `stop()`; it does not keep the process alive by itself. The servers of test processes
 * that were killed outright (SIGKILL) are shut down, and their folders removed, here first.
 * @throws {RedisServerNotFoundError} when no binary is found (see `binary`).
 * @throws {TestRedisStartError} when the server exits at start or does not answer within
 *   `startTimeoutMs`; the message ends with its log's last lines.
 * @example
 * ```ts
 * const redis = await startTestRedis();
 * // ... RedisAckQueueModule, or overrideQueueForTesting, with connection: redis.url
 * await redis.stop();
 * ```
 */
export async function startTestRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  const binary = findServerBinary(options.binary);
  await reapOrphanedServers();
  // Another process may take the probed port before the server binds it: then try fresh ports.
  for (let attempt = 1; ; attempt++) {
    const server = new TestRedisServer(binary, await freePort(), options.args ?? []);
    try {
      await server.start(options.startTimeoutMs ?? 20_000);
      return server;
    } catch (error) {
      await server.stop();
      const portTaken = error instanceof TestRedisStartError && /Address already in use/i.test(error.logTail);
      if (!portTaken || attempt === 3) throw error;
    }
  }
}

/** One server process and its folder. */
class TestRedisServer implements TestRedis {
  readonly url: string;
  readonly dir: string;
  private child: ChildProcess | undefined;
  private output = '';
  private stopping: Promise<void> | undefined;

  constructor(
    readonly binary: string,
    readonly port: number,
    private readonly extraArgs: string[],
  ) {
    this.url = `redis://${HOST}:${port}`;
    this.dir = makeServerFolder(port);
  }

  async start(timeoutMs: number): Promise<void> {
    const args = ['--port', String(this.port), '--bind', HOST, '--dir', this.dir, '--save', '', '--appendonly', 'no'];
    args.push('--logfile', 'redis.log', '--daemonize', 'no', ...this.extraArgs);
    // stderr: a bad argument is reported there, before the log file opens.
    const child = spawn(this.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    killOnExit(this, () => this.killNow());
    let failure: Error | undefined;
    child.on('error', (error) => (failure = error));
    const stderr = child.stderr as Readable & { unref?: () => void };
    stderr.on('data', (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-4_000)));
    // Neither keeps the test process alive: a forgotten server is killed on its exit.
    child.unref();
    stderr.unref?.();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (failure) throw this.startError(failure.message);
      if (child.exitCode !== null || child.signalCode !== null)
        throw this.startError(`it exited (${child.exitCode ?? child.signalCode})`);
      if ((await sendCommand(this.port, 'PING')) === '+PONG') return;
      if (Date.now() > deadline) throw this.startError(`no answer within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async flush(): Promise<void> {
    const reply = await sendCommand(this.port, 'FLUSHALL', FLUSH_TIMEOUT_MS);
    if (reply !== '+OK')
      throw new RedisUnavailableError(
        'flush the test Redis',
        undefined,
        reply ?? `no answer within ${FLUSH_TIMEOUT_MS} ms`,
      );
  }

  stop(): Promise<void> {
    this.stopping ??= this.kill();
    return this.stopping;
  }

  private async kill(): Promise<void> {
    const child = this.child;
    // No pid: the spawn failed, and no exit event is sure to follow.
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // The child was unref'd: without this, a process with nothing else to do ends before the exit event.
      child.ref();
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
    forget(this);
  }

  /** On the way out: SIGKILL without waiting (an exit listener cannot wait), then the folder. */
  private killNow(): void {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private startError(reason: string): TestRedisStartError {
    let log = '';
    try {
      log = readFileSync(join(this.dir, 'redis.log'), 'utf8');
    } catch {
      // No log yet: the server failed before opening it (its stderr says why).
    }
    const tail = `${this.output}${log}`.trimEnd().split('\n').slice(-20).join('\n');
    return new TestRedisStartError(this.binary, this.port, reason, tail);
  }
}
