import { ReplicationTimeoutError } from '../../errors';
import { mapRedisError } from '../../errors/map-redis-error';
import type { QueueKeys } from '../keys/queue-keys';
import { addQueueScript } from '../scripts/queue-scripts';
import type { RedisClient } from '../redis/connection';

interface PendingPush {
  /** push.lua, or push-keyed.lua for pushes with a key mode. */
  script: 'push' | 'pushKeyed';
  chunks: (string | number)[][];
  ids: string[];
  resolve(replies: (number | string)[][]): void;
  reject(error: unknown): void;
}

/**
 * Pushes that resolve only once replicas have them. WAIT blocks its connection until the
 * replicas confirm, so the pushes of one event-loop turn to one partition share a single
 * pipeline ending in one WAIT (a group commit), sent to the partition's master: WAIT
 * covers every write made before it on that connection.
 */
export class ReplicatedPushes {
  private readonly pending = new Map<QueueKeys, { topic: string; pushes: PendingPush[] }>();

  constructor(
    private readonly client: RedisClient,
    private readonly replicas: number,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves with each chunk's push reply once the replicas confirmed; rejects otherwise. */
  push<R extends (number | string)[]>(
    topic: string,
    keys: QueueKeys,
    chunks: (string | number)[][],
    ids: string[],
    script: PendingPush['script'] = 'push',
  ): Promise<R[]> {
    let batch = this.pending.get(keys);
    if (!batch) {
      batch = { topic, pushes: [] };
      this.pending.set(keys, batch);
      setImmediate(() => void this.flush(keys));
    }
    const pushes = batch.pushes;
    return new Promise<R[]>((resolve, reject) =>
      pushes.push({ script, chunks, ids, resolve: resolve as PendingPush['resolve'], reject }),
    );
  }

  private async flush(keys: QueueKeys): Promise<void> {
    const { topic, pushes } = this.pending.get(keys)!;
    this.pending.delete(keys);
    let replies: [Error | null, unknown][];
    // Building the pipeline can throw too: inside the try, so every push of the batch settles.
    try {
      const pipeline = this.client.pipeline();
      for (const { script, chunks } of pushes)
        for (const chunk of chunks) addQueueScript(pipeline, script, keys, chunk);
      pipeline.wait(this.replicas, this.timeoutMs);
      replies = (await pipeline.exec()) ?? [];
    } catch (error) {
      for (const push of pushes) push.reject(mapRedisError(error, 'push', topic));
      return;
    }
    const confirmed = Number(replies.at(-1)?.[1] ?? 0);
    let next = 0;
    for (const push of pushes) {
      const own = replies.slice(next, (next += push.chunks.length));
      const failed = own.find(([error]) => error);
      if (failed) push.reject(mapRedisError(failed[0], 'push', topic));
      else if (confirmed < this.replicas)
        push.reject(new ReplicationTimeoutError(topic, push.ids, confirmed, this.replicas));
      else push.resolve(own.map(([, reply]) => reply as (number | string)[]));
    }
  }
}
