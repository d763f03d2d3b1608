import type { Redis } from 'ioredis';
import { redisServerRelease } from '../support/redis-processes/redis-binary';
import { RedisCluster } from '../support/redis-processes/redis-cluster';
import { commandCalls, commandUsec, cpuSeconds } from './redis-server';

/** One node of a BenchCluster, with the benchmark's own connection to it. */
export interface BenchClusterNode {
  port: number;
  /** The benchmark's own connection: INFO, FLUSHALL, CONFIG RESETSTAT, CLUSTER. */
  admin: Redis;
}

/**
 * A private Redis Cluster of `masters` masters and no replicas for one benchmark round: memory-only
 * redis-servers, slots split in equal contiguous ranges.
 */
export class BenchCluster {
  readonly nodes: BenchClusterNode[];

  private constructor(
    private readonly cluster: RedisCluster,
    private readonly serverVersion: string,
    /** The nodes count CPU per slot (CLUSTER SLOT-STATS): Valkey 8.0 or later. */
    readonly slotStats: boolean,
  ) {
    this.nodes = cluster.servers.map((server) => ({ port: server.port, admin: server.client() }));
  }

  static async start(masters: number): Promise<BenchCluster> {
    // First: a missing binary fails here with the install hint.
    const version = redisServerRelease();
    const slotStats = Number(/^Valkey (\d+)/.exec(version)?.[1] ?? 0) >= 8;
    // Redis' own node timeout (15 s): under full load a busy node must not be taken for a failed one.
    const cluster = await RedisCluster.start({
      masters,
      replicasPerMaster: 0,
      nodeTimeoutMs: 15_000,
      config: slotStats ? ['cluster-slot-stats-enabled', 'yes'] : [],
    });
    return new BenchCluster(cluster, version, slotStats);
  }

  /** Seed nodes for `{ cluster: [...] }`. */
  get seeds(): { host: string; port: number }[] {
    return this.cluster.seeds;
  }

  version(): string {
    return this.serverVersion;
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
  commandCalls(): Promise<Map<string, number>[]> {
    return Promise.all(this.nodes.map((n) => commandCalls(n.admin)));
  }

  /** INFO commandstats of each node, as command -> microseconds (a script's time includes the commands it runs). */
  commandUsec(): Promise<Map<string, number>[]> {
    return Promise.all(this.nodes.map((n) => commandUsec(n.admin)));
  }

  /**
   * Microseconds of CPU each slot has used since the node started, summed over the nodes (a slot
   * lives on one): Valkey's CLUSTER SLOT-STATS, which charges a command (a script with all it runs)
   * to the slot of its keys. Only slots that used any; empty when the nodes do not count per slot.
   */
  async slotCpuUsec(): Promise<Map<number, number>> {
    const usec = new Map<number, number>();
    if (!this.slotStats) return usec;
    for (const node of this.nodes) {
      const rows = (await node.admin.call('CLUSTER', 'SLOT-STATS', 'ORDERBY', 'cpu-usec', 'LIMIT', '100')) as [
        number,
        (string | number)[],
      ][];
      for (const [slot, fields] of rows) {
        const cpu = Number(fields[fields.indexOf('cpu-usec') + 1]);
        if (cpu > 0) usec.set(Number(slot), cpu);
      }
    }
    return usec;
  }

  /** CPU seconds each node has used (user + system, main thread and children). */
  cpuSeconds(): Promise<number[]> {
    return Promise.all(this.nodes.map((n) => cpuSeconds(n.admin)));
  }

  /** Kills every node and removes its folder. Safe to call twice. */
  stop(): Promise<void> {
    return this.cluster.stop();
  }
}
