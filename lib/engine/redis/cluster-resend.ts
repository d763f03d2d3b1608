import { Cluster } from 'ioredis';
import type { RedisClient } from './connection';

/** ioredis' error for a command whose connection closed before it was answered. */
const CONNECTION_CLOSED = 'Connection is closed.';
/**
 * The pause before each resend of one call. The first lets ioredis handle the socket closes
 * still queued, so the resend does not go to a node connection that is already dead but not
 * yet known to be; the later ones wait for the Cluster to notice that every node is gone (it
 * then holds commands in its offline queue). About 0.8 s in all.
 */
const RESEND_PAUSES_MS = [5, 20, 50, 100, 200, 400];

/**
 * Runs `send`, sending it again when a Cluster dropped its connection under it. A plain client
 * resends the commands a dropped connection left unanswered. A Cluster does too, but only while
 * it is 'ready': when every node connection drops at once (CLIENT KILL, a network cut) it fails
 * them with "Connection is closed.". Sent again, the command waits in its offline queue until it
 * reconnects, as a plain client's would; the caller's bound (commandTimeoutMs) still applies.
 * Only idempotent commands and the queue's scripts (fenced or deduplicated) go through here.
 */
export async function withClusterResends<T>(client: RedisClient, send: () => Promise<T>): Promise<T> {
  for (let resends = 0; ; resends++) {
    try {
      return await send();
    } catch (error) {
      if (resends >= RESEND_PAUSES_MS.length || !resendable(client, error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, RESEND_PAUSES_MS[resends]));
    }
  }
}

function resendable(client: RedisClient, error: unknown): boolean {
  return (
    client instanceof Cluster &&
    client.status !== 'end' &&
    error instanceof Error &&
    error.message === CONNECTION_CLOSED
  );
}
