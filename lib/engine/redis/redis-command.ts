import { mapRedisError } from '../../errors/map-redis-error';
import { withClusterResends } from './cluster-resend';
import type { RedisClient } from './connection';

/** Per client, the calls sent through here and not answered yet. */
const outstanding = new WeakMap<RedisClient, number>();

/**
 * The one path to Redis for the queue's calls, its scripts (ScriptRunner) and its plain commands
 * alike: `send` goes again where a Cluster dropped it (see withClusterResends: only idempotent
 * commands and the queue's scripts come here), and a failure becomes a typed error naming
 * `operation` (see mapRedisError). `send` is told whether the client is idle: no other call of the
 * queue outstanding on it, so one sent at once, past auto-pipelining, still keeps their order.
 */
export async function sendCommand<T>(
  client: RedisClient,
  operation: string,
  topic: string | undefined,
  send: (idle: boolean) => Promise<T>,
): Promise<T> {
  const before = outstanding.get(client) ?? 0;
  outstanding.set(client, before + 1);
  try {
    return await withClusterResends(client, () => send(before === 0));
  } catch (error) {
    throw mapRedisError(error, operation, topic);
  } finally {
    outstanding.set(client, outstanding.get(client)! - 1);
  }
}
