import type { Redis } from 'ioredis';
import { redisServerRelease } from '../support/redis-processes/redis-binary';
import { RedisServer } from '../support/redis-processes/redis-server';

/** A private, memory-only redis-server for one benchmark run, with the benchmark's own connection. */
export class BenchRedis {
  /** The benchmark's own connection: INFO, FLUSHALL, CONFIG RESETSTAT. */
  readonly admin: Redis;

  private constructor(
    private readonly server: RedisServer,
    private readonly serverVersion: string,
  ) {
    this.admin = server.client();
  }

  static async start(): Promise<BenchRedis> {
    // First: a missing binary fails here with the install hint.
    const version = redisServerRelease();
    return new BenchRedis(await RedisServer.start(), version);
  }

  get port(): number {
    return this.server.port;
  }

  get url(): string {
    return this.server.url;
  }

  version(): string {
    return this.serverVersion;
  }

  /** One numeric field of INFO <section>. */
  async info(section: string, field: string): Promise<number> {
    const text = await this.admin.info(section);
    return Number(new RegExp(`^${field}:(\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  }

  cpuSeconds(): Promise<number> {
    return cpuSeconds(this.admin);
  }

  commandCalls(): Promise<Map<string, number>> {
    return commandCalls(this.admin);
  }

  commandUsec(): Promise<Map<string, number>> {
    return commandUsec(this.admin);
  }

  /** Closes the connection, kills the server and removes its folder. */
  stop(): Promise<void> {
    return this.server.stop();
  }
}

/** CPU seconds a server has used (user + system, main thread and children). */
export async function cpuSeconds(admin: Redis): Promise<number> {
  const text = await admin.info('cpu');
  let total = 0;
  for (const match of text.matchAll(/^used_cpu_(?:user|sys)(?:_children)?:([\d.]+)/gm)) total += Number(match[1]);
  return total;
}

/** INFO commandstats of a server as command -> calls (commands run inside scripts included). */
export async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const text = await admin.info('commandstats');
  const calls = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
  return calls;
}

/**
 * INFO commandstats of a server as command -> microseconds spent in it (a script's time includes
 * the commands it runs, which are also listed on their own).
 */
export async function commandUsec(admin: Redis): Promise<Map<string, number>> {
  const text = await admin.info('commandstats');
  const usec = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=\d+,usec=(\d+)/gm)) usec.set(match[1], Number(match[2]));
  return usec;
}
