import { PartitionCountMismatchError } from '../errors';
import type { OutboxConnection, RedisAckQueueConnection } from '../interfaces';
import { RedisAckQueueService } from '../service/redis-ack-queue.service';
import type { CliIo } from './cli-io';
import { CliFailure, EXIT } from './exit-codes';
import { inert } from './output';

/** The options every command takes (before or after its name). */
export interface GlobalOptions {
  url?: string;
  cluster?: string;
  prefix: string;
  json?: boolean;
  yes?: boolean;
  timeout: number;
}

/** Where Redis is: --cluster / REDIS_CLUSTER seeds, else --url / REDIS_URL, else the local default. */
export function connectionOf(options: GlobalOptions, env: NodeJS.ProcessEnv): RedisAckQueueConnection {
  const seeds = options.cluster ?? (options.url ? undefined : env.REDIS_CLUSTER);
  if (seeds) {
    const cluster = seeds.split(',').map((seed) => {
      const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(seed.trim());
      if (!match) throw new CliFailure(`--cluster: "${seed}" is not host:port`, EXIT.usage);
      return { host: match[1], port: Number(match[2]) };
    });
    return { cluster };
  }
  return options.url ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/**
 * One command's service: no consumers, no scheduler, silent logs (stdout carries only the
 * command's output). A partitioned topic is found on first use: when Redis records another
 * partition count than assumed, the service is made again with the recorded one.
 */
export class CliContext {
  private service: RedisAckQueueService | undefined;
  private outboxService: RedisAckQueueService | undefined;
  private readonly partitions = new Map<string, number>();
  private readonly checked = new Set<string>();

  constructor(
    readonly options: GlobalOptions,
    readonly io: CliIo,
    /** The environment the CLI reads (REDIS_URL, REDIS_CLUSTER, OUTBOX_URL). */
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The connected service. */
  async queue(): Promise<RedisAckQueueService> {
    if (!this.service) {
      const service = new RedisAckQueueService({
        ...this.serviceOptions(),
        topics: Object.fromEntries([...this.partitions].map(([topic, partitions]) => [topic, { partitions }])),
      });
      this.service = service;
      await service.connect();
    }
    return this.service;
  }

  /**
   * The service of the `outbox` commands: the outbox in `connection` (its `table`), no relay
   * (the command only reads and sweeps the table), not connected to Redis (the outbox's reads
   * are PostgreSQL's only: they answer while Redis is down).
   */
  outboxQueue(connection: OutboxConnection, table: string | undefined): RedisAckQueueService {
    this.outboxService ??= new RedisAckQueueService({
      ...this.serviceOptions(),
      outbox: { connection, ...(table !== undefined && { table }), relay: false },
    });
    return this.outboxService;
  }

  /** What every service of the CLI is built with: where Redis is, no scheduler, no log, its timeout. */
  private serviceOptions() {
    return {
      connection: connectionOf(this.options, this.env),
      prefix: this.options.prefix,
      scheduler: false,
      logLevel: 'silent' as const,
      connectTimeoutMs: this.options.timeout,
      commandTimeoutMs: this.options.timeout,
    };
  }

  /**
   * Runs `work` on the service once the topic's partition count is checked (checkTopic): when
   * Redis records another count, the service is made again with the recorded one.
   */
  async onTopic<T>(topic: string, work: (queue: RedisAckQueueService) => Promise<T>): Promise<T> {
    if (!this.checked.has(topic)) {
      try {
        await (await this.queue()).checkTopic(topic);
      } catch (error) {
        if (!(error instanceof PartitionCountMismatchError) || error.topic !== topic) throw error;
        this.partitions.set(topic, error.stored);
        await this.close();
        await (await this.queue()).checkTopic(topic);
      }
      this.checked.add(topic);
    }
    return work(await this.queue());
  }

  /** Asks before a destructive change; refuses off a terminal unless --yes. */
  async confirm(question: string): Promise<boolean> {
    if (this.options.yes) return true;
    if (!this.io.interactive)
      throw new CliFailure('refusing a destructive command without a terminal to confirm: pass --yes', EXIT.usage);
    const answer = await this.io.ask(`${inert(question)} [y/N] `);
    if (/^y(es)?$/i.test(answer.trim())) return true;
    this.io.err('Nothing changed.\n');
    return false;
  }

  async close(): Promise<void> {
    const [service, outbox] = [this.service, this.outboxService];
    this.service = undefined;
    this.outboxService = undefined;
    await service?.close(0);
    await outbox?.close(0);
  }
}
