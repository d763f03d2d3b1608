import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const SAMPLE_DIST = join(__dirname, '../../sample-app/dist');

/**
 * A process of the built sample app (sample-app/dist: `npm run build && npm run build:sample`,
 * which `npm test` runs first): `main.js` (the HTTP app, which starts billing as its child) or
 * `billing/main.js`. Its output is kept line by line, for the test to wait on and to show when
 * it fails; its log comes without colours.
 */
export class SampleProcess {
  /** Every line the process wrote, stdout and stderr. */
  readonly lines: string[] = [];
  private readonly arrivals = new EventEmitter();
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(private readonly child: ChildProcess) {
    this.arrivals.setMaxListeners(0);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.lines.push(line);
        this.arrivals.emit('line', line);
      });
    }
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Starts `script` (a path under sample-app/dist) with the test's environment and `env`. */
  static start(script: string, env: Record<string, string>): SampleProcess {
    const path = join(SAMPLE_DIST, script);
    if (!existsSync(path)) throw new Error(`${path} is missing: run npm run build && npm run build:sample`);
    const child = spawn(process.execPath, [path], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new SampleProcess(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /**
   * The first line (already written or still to come) that matches, with its match; rejects
   * after `timeoutMs`, or when the process exits first.
   */
  waitForLine(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
    for (const line of this.lines) {
      const match = pattern.exec(line);
      if (match) return Promise.resolve(match);
    }
    return new Promise((resolve, reject) => {
      const finish = (outcome: () => void) => {
        clearTimeout(timer);
        this.arrivals.off('line', onLine);
        this.child.off('exit', onExit);
        outcome();
      };
      const onLine = (line: string) => {
        const match = pattern.exec(line);
        if (match) finish(() => resolve(match));
      };
      const onExit = () => finish(() => reject(new Error(`exited before writing ${pattern}:\n${this.output()}`)));
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no line ${pattern} within ${timeoutMs} ms:\n${this.output()}`))),
        timeoutMs,
      );
      this.arrivals.on('line', onLine);
      this.child.once('exit', onExit);
    });
  }

  /** Sends `signal` (unless it already exited) and resolves with how the process exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  /** What the process wrote, for a failure's message. */
  output(): string {
    return this.lines.join('\n');
  }
}
