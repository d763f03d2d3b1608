import { Cluster } from 'ioredis';
import type { RedisClient } from './connection';

/**
 * A pub/sub connection of its own, duplicated from the service's client: a subscribed
 * connection can run nothing else. ioredis subscribes again after a reconnect; on a Cluster it
 * subscribes through one node and the cluster bus delivers every node's publishes. Its errors
 * are swallowed: a missed notice is covered by whoever listens (each says how).
 */
export function openSubscriber(client: RedisClient, onMessage: (channel: string, text: string) => void): RedisClient {
  const subscriber: RedisClient =
    client instanceof Cluster
      ? client.duplicate(undefined, { enableAutoPipelining: false })
      : client.duplicate({ enableAutoPipelining: false });
  subscriber.on('error', () => undefined);
  subscriber.on('message', onMessage);
  return subscriber;
}

/** Closes a subscriber: politely when it is connected, at once otherwise (a QUIT would wait for Redis to come back). */
export async function closeSubscriber(subscriber: RedisClient): Promise<void> {
  if (subscriber.status !== 'ready') {
    subscriber.disconnect();
    return;
  }
  await subscriber.quit().catch(() => subscriber.disconnect());
}
