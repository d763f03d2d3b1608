import type { RedisClient } from './connection';

/**
 * One PING, timed (ms); rejects when Redis does not answer within `timeoutMs` (a client
 * that is reconnecting queues the command, so only the bound tells a dead Redis).
 */
export async function pingWithin(client: RedisClient, timeoutMs: number): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.ping(), timeout]);
    return performance.now() - started;
  } finally {
    clearTimeout(timer);
  }
}
