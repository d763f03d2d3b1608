import { mapRedisError } from '../../errors/map-redis-error';
import { withClusterResends } from './cluster-resend';
import type { RedisClient } from './connection';

/**
 * The one path to Redis for the queue's calls, its scripts (ScriptRunner) and its plain commands
 * alike: `send` goes again where a Cluster dropped it (see withClusterResends: only idempotent
 * commands and the queue's scripts come here), and a failure becomes a typed error naming
 * `operation` (see mapRedisError).
 */
export async function sendCommand<T>(
  client: RedisClient,
  operation: string,
  topic: string | undefined,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await withClusterResends(client, send);
  } catch (error) {
    throw mapRedisError(error, operation, topic);
  }
}
