import type { Redis } from 'ioredis';

/**
 * Writes what `push` and `upsertSchedule` refuse but Redis may still hold (an older version,
 * another writer): the test stores valid values through the API, then rewrites them here.
 */
export class StoredValues {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Gives `member` the time `score` in every sorted set of the prefix that holds it (due, deadline, next run). */
  async rescore(member: string, score: number): Promise<void> {
    for (const key of await this.keys('zset')) {
      if ((await this.redis.zscore(key, member)) !== null) await this.redis.zadd(key, 'XX', score, member);
    }
  }

  /** Rewrites the stored definition of `schedule` (JSON) with `change`. */
  async rewriteSchedule(schedule: string, change: (definition: Record<string, unknown>) => void): Promise<void> {
    for (const key of await this.keys('hash')) {
      const text = await this.redis.hget(key, schedule);
      if (text === null || !text.startsWith('{')) continue;
      const definition = JSON.parse(text) as Record<string, unknown>;
      change(definition);
      await this.redis.hset(key, schedule, JSON.stringify(definition));
    }
  }

  private async keys(type: string): Promise<string[]> {
    const keys = await this.redis.keys(`*${this.prefix}*`);
    const types = await Promise.all(keys.map((key) => this.redis.type(key)));
    return keys.filter((_, i) => types[i] === type);
  }
}
