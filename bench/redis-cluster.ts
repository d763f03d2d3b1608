import type { Redis } from 'ioredis';
import { redisServerRelease } from '../support/redis-processes/redis-binary';
import { RedisCluster } from '../support/redis-processes/redis-cluster';
import { commandCalls, cpuSeconds } from './redis-server';

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
  ) {
    this.nodes = cluster.servers.map((server) => ({ port: server.port, admin: server.client() }));
  }

  static async start(masters: number): Promise<BenchCluster> {
    // First: a missing binary fails here with the install hint.
    const version = redisServerRelease();
    // Redis' own node timeout (15 s): under full load a busy node must not be taken for a failed one.
    const cluster = await RedisCluster.start({ masters, replicasPerMaster: 0, nodeTimeoutMs: 15_000 });
    return new BenchCluster(cluster, version);
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

  /** CPU seconds each node has used (user + system, main thread and children). */
  cpuSeconds(): Promise<number[]> {
    return Promise.all(this.nodes.map((n) => cpuSeconds(n.admin)));
  }

  /** Kills every node and removes its folder. Safe to call twice. */
  stop(): Promise<void> {
    return this.cluster.stop();
  }
}
