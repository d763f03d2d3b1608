import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { answers, freePort } from './redis-server';

const SLOTS = 16384;

/** Every redis-server this process spawned and has not stopped yet, with its folder (Ctrl-C mid-start included). */
const live = new Map<ChildProcess, string>();

/** Synchronous last resort for exit paths: SIGKILL every node still running and remove its folder. */
export function killAllClusterNodes(): void {
  for (const [child, dir] of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  live.clear();
}

/** One cluster-enabled redis-server of a BenchCluster, with the benchmark's own connection to it. */
export interface ClusterNodeProcess {
  port: number;
  /** Cluster bus port (`cluster-port`), chosen free too: port + 10000 may not exist. */
  busPort: number;
  dir: string;
  child: ChildProcess;
  /** The benchmark's own connection: INFO, FLUSHALL, CONFIG RESETSTAT, CLUSTER. */
  admin: Redis;
}

/**
 * A private Redis Cluster of `masters` masters and no replicas: memory-only redis-servers on
 * free ports in temp folders (never the shared 6379), slots split in equal contiguous ranges
 * by `redis-cli --cluster create` (a 1-master cluster gets every slot by CLUSTER ADDSLOTSRANGE).
 */
export class BenchCluster {
  private stopped = false;

  private constructor(readonly nodes: ClusterNodeProcess[]) {}

  static async start(masters: number): Promise<BenchCluster> {
    const nodes: ClusterNodeProcess[] = [];
    const cluster = new BenchCluster(nodes);
    try {
      for (let i = 0; i < masters; i++) nodes.push(await startNode());
      if (masters === 1) {
        await nodes[0].admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', String(SLOTS - 1));
      } else {
        const cli = process.env.REDIS_CLI_BIN ?? 'redis-cli';
        const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
        await promisify(execFile)(
          cli,
          ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
          { timeout: 30_000 },
        );
      }
      await cluster.waitUntilOk(masters, 20_000);
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** Seed nodes for `{ cluster: [...] }`. */
  get seeds(): { host: string; port: number }[] {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  version(): string {
    const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    return /v=([\d.]+)/.exec(execFileSync(binary, ['--version']).toString())?.[1] ?? 'unknown';
  }

  /** Every node reports cluster_state:ok, knows every other node and sees all slots served. */
  private async waitUntilOk(masters: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const infos = await Promise.all(this.nodes.map((n) => n.admin.call('CLUSTER', 'INFO').then(String, () => '')));
      const ok = infos.every(
        (info) =>
          /^cluster_state:ok/m.test(info) &&
          new RegExp(`^cluster_slots_ok:${SLOTS}\\b`, 'm').test(info) &&
          new RegExp(`^cluster_known_nodes:${masters}\\b`, 'm').test(info),
      );
      if (ok) return;
      if (Date.now() > deadline)
        throw new Error(
          `cluster of ${masters} did not reach cluster_state:ok in ${timeoutMs} ms:\n${infos.join('\n')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The node (index into `nodes`) that serves `slot`, from CLUSTER SLOTS of the first node. */
  async slotOwners(): Promise<(slot: number) => number> {
    const ranges = (await this.nodes[0].admin.call('CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number, ...unknown[]],
    ][];
    const table = ranges.map(([from, to, [, port]]) => ({
      from,
      to,
      node: this.nodes.findIndex((n) => n.port === Number(port)),
    }));
    return (slot) => table.find((r) => slot >= r.from && slot <= r.to)?.node ?? -1;
  }

  async flushAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.admin.flushall()));
  }

  async resetStats(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.admin.config('RESETSTAT')));
  }

  /** INFO commandstats of each node, as command -> calls (commands run inside scripts included). */
  async commandCalls(): Promise<Map<string, number>[]> {
    return Promise.all(
      this.nodes.map(async (n) => {
        const text = await n.admin.info('commandstats');
        const calls = new Map<string, number>();
        for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
        return calls;
      }),
    );
  }

  /** CPU seconds each node has used (user + system, main thread and children). */
  async cpuSeconds(): Promise<number[]> {
    return Promise.all(
      this.nodes.map(async (n) => {
        const text = await n.admin.info('cpu');
        let total = 0;
        for (const match of text.matchAll(/^used_cpu_(?:user|sys)(?:_children)?:([\d.]+)/gm)) total += Number(match[1]);
        return total;
      }),
    );
  }

  /** SIGTERM every node (SIGKILL after 5 s), then remove the temp folders. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.nodes.map(stopNode));
  }
}

async function startNode(attempt = 1): Promise<ClusterNodeProcess> {
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const port = await freePort();
  let busPort = await freePort();
  while (busPort === port) busPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ackq-bench-cluster-'));
  // no persistence; cluster state in the temp folder; announce 127.0.0.1 so a lone node's CLUSTER SLOTS names a host
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-port',
    String(busPort),
    '--cluster-announce-ip',
    '127.0.0.1',
    '--logfile',
    'redis.log',
    '--daemonize',
    'no',
  ];
  const child = spawn(binary, args, { stdio: 'ignore' });
  live.set(child, dir);
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      live.delete(child);
      rmSync(dir, { recursive: true, force: true });
      // Another process may have taken a port between the probe and the bind: try fresh ports.
      if (attempt < 3) return startNode(attempt + 1);
      throw new Error(`${binary} exited at start (port ${port}, bus ${busPort})`);
    }
    if (await answers(port)) break;
    if (Date.now() > deadline) {
      live.delete(child);
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${binary} did not come up on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const admin = new Redis({ port, host: '127.0.0.1' });
  return { port, busPort, dir, child, admin };
}

async function stopNode(node: ClusterNodeProcess): Promise<void> {
  node.admin.disconnect();
  if (node.child.exitCode === null && node.child.signalCode === null) {
    const exited = new Promise((resolve) => node.child.once('exit', resolve));
    node.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
  }
  rmSync(node.dir, { recursive: true, force: true });
  live.delete(node.child);
}
