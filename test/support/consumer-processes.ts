import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ConsumerEvent {
  pid: number;
  type: 'ready' | 'start' | 'done' | 'acked' | 'lease-lost' | 'error';
  id?: string;
  attempt?: number;
}

/** Consumer processes of the built library, whose events the test can read and count. */
export class ConsumerProcesses {
  readonly events: ConsumerEvent[] = [];
  private readonly children = new Set<ChildProcess>();

  constructor(private readonly env: Record<string, string>) {}

  async start(extra: Record<string, string> = {}): Promise<ChildProcess> {
    const child = spawn(process.execPath, [join(__dirname, 'consumer-process.js')], {
      env: { ...process.env, ...this.env, ...extra },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    const ready = new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const event = JSON.parse(line) as ConsumerEvent;
        this.events.push(event);
        if (event.type === 'ready') resolve();
        if (event.type === 'error') reject(new Error(line));
      });
      child.once('exit', (code) => reject(new Error(`consumer exited with ${code} before it was ready`)));
    });
    await ready;
    return child;
  }

  of(type: ConsumerEvent['type'], pid?: number): ConsumerEvent[] {
    return this.events.filter((e) => e.type === type && (pid === undefined || e.pid === pid));
  }

  async kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.children].map((child) => this.kill(child, 'SIGKILL')));
  }
}
