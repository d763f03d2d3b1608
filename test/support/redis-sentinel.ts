import type { Redis } from 'ioredis';
import { eventually } from './queue-fixture';
import { RedisServer, type RedisServerOptions } from '../../support/redis-processes/redis-server';

export interface RedisAddress {
  host: string;
  port: number;
}

/** Sentinel timing: a master silent for 1 s is down; a failover may take 5 s before it is retried. */
export const SENTINEL_DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 5_000;
const HOST = '127.0.0.1';

/**
 * A master, one replica (REPLICAOF) and three Sentinels (quorum 2), each a private
 * redis-server on a free port in a temporary folder. Tests kill the master and watch
 * the Sentinels promote the replica. Never the shared 6379.
 */
export class RedisSentinelSet {
  readonly name = 'mymaster';
  /** One inspection client per Sentinel, and per data server once asked. */
  private readonly sentinelClients: Redis[];
  private readonly dataClients = new Map<number, Redis>();

  private constructor(
    /** Master first, then the replica: found by port, whichever is master now. */
    private readonly data: RedisServer[],
    private readonly watchers: RedisServer[],
  ) {
    this.sentinelClients = watchers.map((sentinel) => sentinel.client());
  }

  static async start(): Promise<RedisSentinelSet> {
    const started: RedisServer[] = [];
    const launch = async (options: RedisServerOptions) => {
      const server = await RedisServer.start(options);
      started.push(server);
      return server;
    };
    try {
      const master = await launch({});
      const replica = await launch({ config: ['replicaof', `${HOST} ${master.port}`] });
      // Sentinels learn about replicas from the master's INFO: start them once the link is up.
      const link = replica.client();
      await eventually(async () => /master_link_status:up/.test(await link.info('replication')), 20_000, 50);
      const watchers: RedisServer[] = [];
      for (let i = 0; i < 3; i++) watchers.push(await launch({ sentinel: sentinelConfig(master.port) }));
      const set = new RedisSentinelSet([master, replica], watchers);
      await set.waitUntilWatching();
      return set;
    } catch (error) {
      await Promise.all(started.map((server) => server.stop()));
      throw error;
    }
  }

  /** The Sentinels' addresses, as ioredis takes them: `{ sentinels, name }`. */
  get sentinels(): RedisAddress[] {
    return this.watchers.map((sentinel) => ({ host: HOST, port: sentinel.port }));
  }

  /** The master as the first Sentinel names it now. */
  async master(): Promise<RedisAddress> {
    return (await this.mastersNamed())[0];
  }

  /** The test's own client to the data server at `address` (one per server, for inspection); closed by stop(). */
  client(address: RedisAddress): Redis {
    let client = this.dataClients.get(address.port);
    if (!client) {
      client = this.serverAt(address).client();
      this.dataClients.set(address.port, client);
    }
    return client;
  }

  /** SIGKILLs the current master (no shutdown, no last words to the replica); resolves once it is gone. */
  async killMaster(): Promise<RedisAddress> {
    const master = await this.master();
    await this.serverAt(master).kill();
    return master;
  }

  /**
   * Freezes the replica (SIGSTOP) and has the master drop its link, so that the writes from now on
   * reach the master only, as with a replica that lags: a failover to it loses them. thawReplicas() ends it.
   */
  async freezeReplica(): Promise<RedisAddress> {
    const master = await this.master();
    const replica = this.data.find((server) => server.port !== master.port && server.pid !== undefined);
    if (!replica) throw new Error('this set has no live replica to freeze');
    replica.pause();
    await this.client(master).call('CLIENT', 'KILL', 'TYPE', 'replica');
    return { host: HOST, port: replica.port };
  }

  /** SIGCONT to every data server still running (a frozen replica goes on). */
  thawReplicas(): void {
    for (const server of this.data) if (server.pid !== undefined) server.resume();
  }

  /** Resolves with the new master once every Sentinel names the same one, not `old`, and it acts as master. */
  async waitForNewMaster(old: RedisAddress, timeoutMs = 30_000): Promise<RedisAddress> {
    const promoted = await eventually(
      async () => {
        const named = await this.mastersNamed();
        const [first] = named;
        if (first.port === old.port || named.some((address) => address.port !== first.port)) return undefined;
        const [role] = (await this.client(first).call('ROLE')) as string[];
        return role === 'master' ? first : undefined;
      },
      timeoutMs,
      50,
    );
    return promoted!;
  }

  /** Kills every process and removes every folder (Sentinels first, so none reconfigures a server). */
  async stop(): Promise<void> {
    await Promise.all(this.watchers.map((sentinel) => sentinel.stop()));
    await Promise.all(this.data.map((server) => server.stop()));
  }

  /** Until each Sentinel sees the master, the replica and the two other Sentinels. */
  private async waitUntilWatching(): Promise<void> {
    await eventually(
      async () => {
        for (const client of this.sentinelClients) {
          const replicas = (await client.call('SENTINEL', 'replicas', this.name)) as string[][];
          const peers = (await client.call('SENTINEL', 'sentinels', this.name)) as string[][];
          const healthy = replicas.filter((fields) => !/s_down|disconnected/.test(field(fields, 'flags')));
          if (healthy.length !== 1 || peers.length !== 2) return false;
        }
        return true;
      },
      30_000,
      100,
    );
  }

  private async mastersNamed(): Promise<RedisAddress[]> {
    return Promise.all(
      this.sentinelClients.map(async (client) => {
        const [host, port] = (await client.call('SENTINEL', 'get-master-addr-by-name', this.name)) as string[];
        return { host, port: Number(port) };
      }),
    );
  }

  private serverAt(address: RedisAddress): RedisServer {
    const server = this.data.find((candidate) => candidate.port === address.port);
    if (!server) throw new Error(`no server of this set listens on ${address.host}:${address.port}`);
    return server;
  }
}

function sentinelConfig(masterPort: number): string[] {
  return [
    `sentinel monitor mymaster ${HOST} ${masterPort} 2`,
    `sentinel down-after-milliseconds mymaster ${SENTINEL_DOWN_AFTER_MS}`,
    `sentinel failover-timeout mymaster ${FAILOVER_TIMEOUT_MS}`,
    'sentinel parallel-syncs mymaster 1',
    // Every address a Sentinel hands out or announces is 127.0.0.1, where the tests connect.
    `sentinel announce-ip ${HOST}`,
  ];
}

/** A value of a Sentinel reply given as a flat [name, value, name, value...] list. */
function field(fields: string[], name: string): string {
  const i = fields.indexOf(name);
  return i >= 0 && i % 2 === 0 ? fields[i + 1] : '';
}
