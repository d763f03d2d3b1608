import { execFile } from 'node:child_process';
import { Cluster, type ClusterOptions, type Redis } from 'ioredis';
import { redisCliBinary } from './redis-binary';
import { RedisServer } from './redis-server';

export interface RedisClusterOptions {
  /** How many masters. Default 3. */
  masters?: number;
  /** Replicas of each master. Default 1. */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a silent master goes before it is failed over (ms). Default 2000. */
  nodeTimeoutMs?: number;
  /** `requirepass` and `masterauth` on every node. */
  password?: string;
  /** Append-only file with fsync on every write, on every node. Default off. */
  appendonly?: boolean;
  /** Extra config directives for every node, as in RedisServerOptions. */
  config?: string[];
}

/** One line of CLUSTER NODES, as one node sees it. */
interface NodeView {
  id: string;
  port: number;
  flags: string[];
  masterId: string | undefined;
  /** Slot ranges it serves, e.g. ['0-5460']. */
  slots: string[];
}

const SLOTS = 16_384;

/**
 * A private Redis Cluster: 3 masters with one replica each by default, redis-server processes on
 * free ports in temporary folders, formed by `redis-cli --cluster create` (which needs 3 masters
 * or more: a lone master takes every slot by CLUSTER ADDSLOTSRANGE). Tests may kill, pause and
 * restart its nodes; stop() removes everything. Never the shared 6379.
 */
export class RedisCluster {
  /** Node id of each server; ids survive restarts (nodes.conf stays in the server's folder). */
  private readonly ids = new Map<RedisServer, string>();
  private readonly probes = new Map<RedisServer, Redis>();
  private readonly clients: Cluster[] = [];
  /** Slot ranges of each master as of the last consistent view. */
  private slotsOf = new Map<string, string[]>();

  private constructor(
    readonly servers: RedisServer[],
    private readonly options: RedisClusterOptions,
  ) {}

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const {
      masters = 3,
      replicasPerMaster = 1,
      nodeTimeoutMs = 2_000,
      password,
      appendonly = false,
      config = [],
    } = options;
    const settled = await Promise.allSettled(
      Array.from({ length: masters * (1 + replicasPerMaster) }, () =>
        RedisServer.start({
          appendonly,
          password,
          cluster: true,
          config: [
            'cluster-node-timeout',
            String(nodeTimeoutMs),
            // Replicas sync at once instead of waiting 5 s for more replicas to share a diskless transfer.
            'repl-diskless-sync-delay',
            '0',
            ...(password ? ['masterauth', password] : []),
            ...config,
          ],
        }),
      ),
    );
    const servers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const cluster = new RedisCluster(servers, options);
    try {
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
      await cluster.create();
      for (const server of servers)
        cluster.ids.set(server, String(await cluster.probe(server).call('CLUSTER', 'MYID')));
      await cluster.waitUntilHealthy(30_000);
    } catch (error) {
      const logs = cluster.logTails();
      await cluster.stop();
      throw new Error(`Redis Cluster did not start: ${(error as Error).message}\n${logs}`, { cause: error });
    }
    return cluster;
  }

  /** Seed nodes for the library: `{ cluster: seeds }`. */
  get seeds(): { host: string; port: number }[] {
    return this.servers.map((server) => ({ host: '127.0.0.1', port: server.port }));
  }

  /** ioredis Cluster options that every client of this cluster needs (the password). */
  get clientOptions(): ClusterOptions {
    return this.options.password ? { redisOptions: { password: this.options.password } } : {};
  }

  /** A Cluster client for the test itself (inspection, faults); closed by stop(). */
  client(options: ClusterOptions = {}): Cluster {
    const client = new Cluster(this.seeds, { ...this.clientOptions, ...options });
    this.clients.push(client);
    return client;
  }

  /** The servers that are masters now, as they say of themselves. */
  async masters(): Promise<RedisServer[]> {
    return this.withRole('master');
  }

  /** The servers that are replicas now, as they say of themselves. */
  async replicas(): Promise<RedisServer[]> {
    return this.withRole('slave');
  }

  /** The master that serves the slot of `key`. */
  async nodeForKey(key: string): Promise<RedisServer> {
    const viewer = this.live()[0];
    const slot = Number(await this.probe(viewer).call('CLUSTER', 'KEYSLOT', key));
    const owner = (await this.view(viewer)).find(
      (node) => !isFailed(node) && node.slots.some((range) => inRange(range, slot)),
    );
    if (!owner) throw new Error(`no master serves slot ${slot} of ${key}`);
    return this.serverOn(owner.port);
  }

  /** The replica of `master` (the first found, on a cluster with replicas). */
  async replicaOf(master: RedisServer): Promise<RedisServer> {
    const id = this.ids.get(master);
    for (const server of this.live()) {
      const self = (await this.view(server)).find((node) => node.flags.includes('myself'))!;
      if (self.masterId === id) return server;
    }
    throw new Error(`master on port ${master.port} has no live replica`);
  }

  /**
   * After `oldMaster` died: waits until one of the live nodes serves its slots, every live
   * node agrees and says cluster_state:ok; resolves with the new master.
   */
  async waitForPromotion(oldMaster: RedisServer, timeoutMs = 30_000): Promise<RedisServer> {
    const slots = this.slotsOf.get(this.ids.get(oldMaster)!);
    if (!slots?.length) throw new Error(`port ${oldMaster.port} served no slots in the last consistent view`);
    await this.waitUntilHealthy(timeoutMs, (owner) => owner.get(slots.join(',')) !== this.ids.get(oldMaster));
    const newId = [...this.slotsOf].find(([, ranges]) => ranges.join(',') === slots.join(','))![0];
    return [...this.ids].find(([, id]) => id === newId)![0];
  }

  /**
   * Waits until every live node says cluster_state:ok, all agree on who serves which
   * slots, and every live replica's link to its master is up. `also` adds a condition on
   * the agreed map (slot ranges -> master id).
   */
  async waitUntilHealthy(
    timeoutMs = 30_000,
    also: (owner: Map<string, string>) => boolean = () => true,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: string;
    for (;;) {
      try {
        last = await this.health(also);
        if (last === 'ok') return;
      } catch (error) {
        last = (error as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`cluster not healthy within ${timeoutMs} ms: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The last lines of every node's log, for failure messages. */
  logTails(lines = 15): string {
    return this.servers
      .map(
        (server) =>
          `--- redis-server :${server.port} ---\n${server.log().trimEnd().split('\n').slice(-lines).join('\n')}`,
      )
      .join('\n');
  }

  /** Closes the test's clients, kills every node (paused ones too) and removes their folders. */
  async stop(): Promise<void> {
    this.clients.forEach((client) => client.disconnect());
    await Promise.all(this.servers.map((server) => server.stop()));
  }

  private async create(): Promise<void> {
    const { password, replicasPerMaster = 1 } = this.options;
    if (this.servers.length === 1) {
      await this.probe(this.servers[0]).call('CLUSTER', 'ADDSLOTSRANGE', '0', String(SLOTS - 1));
      return;
    }
    const args = [
      '--cluster',
      'create',
      ...this.servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-replicas',
      String(replicasPerMaster),
      '--cluster-yes',
      ...(password ? ['-a', password, '--no-auth-warning'] : []),
    ];
    return new Promise((resolve, reject) => {
      execFile(redisCliBinary(), args, { timeout: 30_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`redis-cli --cluster create failed (${error.message}):\n${stdout}${stderr}`));
        else resolve();
      });
    });
  }

  /** 'ok', or what is still wrong. */
  private async health(also: (owner: Map<string, string>) => boolean): Promise<string> {
    let agreed: string | undefined;
    let slotsOf = new Map<string, string[]>();
    for (const server of this.live()) {
      const info = String(await this.probe(server).call('CLUSTER', 'INFO'));
      if (!info.includes('cluster_state:ok')) return `:${server.port} says ${/cluster_state:\w+/.exec(info)?.[0]}`;
      const nodes = await this.view(server);
      const owners = nodes.filter((node) => node.slots.length > 0 && !isFailed(node));
      const map = owners
        .map((node) => `${node.id}=${node.slots.join(',')}`)
        .sort()
        .join(' ');
      if (agreed !== undefined && map !== agreed) return `:${server.port} sees other slot owners`;
      agreed = map;
      if (owners.reduce((sum, node) => sum + node.slots.reduce((n, range) => n + rangeSize(range), 0), 0) !== SLOTS) {
        return `:${server.port} sees slots uncovered`;
      }
      if (nodes.find((node) => node.flags.includes('myself'))!.flags.includes('slave')) {
        const replication = await this.probe(server).info('replication');
        if (!replication.includes('master_link_status:up')) return `replica :${server.port} has its master link down`;
      }
      slotsOf = new Map(owners.map((node) => [node.id, node.slots]));
    }
    // Only a view that every live node shares becomes the last consistent one.
    this.slotsOf = slotsOf;
    const owner = new Map([...slotsOf].map(([id, ranges]) => [ranges.join(','), id]));
    return also(owner) ? 'ok' : 'the expected slot owner is not there yet';
  }

  private async withRole(role: 'master' | 'slave'): Promise<RedisServer[]> {
    const found: RedisServer[] = [];
    for (const server of this.live()) {
      const self = (await this.view(server)).find((node) => node.flags.includes('myself'))!;
      if (self.flags.includes(role)) found.push(server);
    }
    return found;
  }

  private async view(server: RedisServer): Promise<NodeView[]> {
    const text = String(await this.probe(server).call('CLUSTER', 'NODES'));
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, master, , , , , ...slots] = line.split(' ');
        return {
          id,
          port: Number(address.split('@')[0].split(':').pop()),
          flags: flags.split(','),
          masterId: master === '-' ? undefined : master,
          // Entries in brackets are slots being migrated, not served.
          slots: slots.filter((slot) => !slot.startsWith('[')),
        };
      });
  }

  private live(): RedisServer[] {
    return this.servers.filter((server) => server.running);
  }

  private serverOn(port: number): RedisServer {
    const server = this.servers.find((s) => s.port === port);
    if (!server) throw new Error(`no server of this cluster on port ${port}`);
    return server;
  }

  /** One plain connection per node for the harness' own checks; closed by the server's stop(). */
  private probe(server: RedisServer): Redis {
    let probe = this.probes.get(server);
    if (!probe) {
      probe = server.client({ commandTimeout: 5_000, maxRetriesPerRequest: 1 });
      // A killed node's probe retries in the background; its errors are expected.
      probe.on('error', () => undefined);
      this.probes.set(server, probe);
    }
    return probe;
  }
}

function isFailed(node: NodeView): boolean {
  return node.flags.includes('fail') || node.flags.includes('fail?');
}

function inRange(range: string, slot: number): boolean {
  const [from, to = from] = range.split('-').map(Number);
  return slot >= from && slot <= to;
}

function rangeSize(range: string): number {
  const [from, to = from] = range.split('-').map(Number);
  return to - from + 1;
}
