import { Cluster } from 'ioredis';
import { mapRedisError } from '../errors/map-redis-error';
import type { RedisClient } from './connection';
import { defineQueueScripts, runQueueScript, type QueueScriptName, type ScriptKeys } from './queue-scripts';

/** ioredis' error for a command whose connection closed before it was answered. */
const CONNECTION_CLOSED = 'Connection is closed.';
/** How often one call is sent again after its Cluster connection closed (see `resendable`). */
const MAX_CLUSTER_RESENDS = 3;

/**
 * Runs the queue's scripts on one client, turning failures into typed errors. It also
 * counts the client's dropped connections: ioredis resends a command whose reply was lost
 * to one, so an answer that arrives after a drop may be the second run of that command.
 */
export class ScriptRunner {
  private drops = 0;

  constructor(readonly client: RedisClient) {
    defineQueueScripts(client);
    const dropped = () => void this.drops++;
    if (client instanceof Cluster) client.on('+node', (node: RedisClient) => node.on('close', dropped));
    else client.on('close', dropped);
  }

  /** A mark to compare with `droppedSince`: how many connections had dropped by now. */
  get mark(): number {
    return this.drops;
  }

  /** Whether a connection dropped after `mark` was taken. */
  droppedSince(mark: number): boolean {
    return this.drops !== mark;
  }

  async run<T>(
    name: QueueScriptName,
    topic: string | undefined,
    keys: ScriptKeys,
    args: (string | number)[],
  ): Promise<T> {
    for (let resends = 0; ; resends++) {
      try {
        return await runQueueScript<T>(this.client, name, keys, args);
      } catch (error) {
        if (resends < MAX_CLUSTER_RESENDS && this.resendable(error)) continue;
        throw mapRedisError(error, name, topic);
      }
    }
  }

  /**
   * A plain client resends the commands a dropped connection left unanswered. A Cluster does
   * too, but only while it is 'ready': when every node connection drops at once (CLIENT KILL,
   * a network cut) it fails them with "Connection is closed.". Sent again, the command waits
   * in its offline queue until it reconnects, as a plain client's would; the caller's bound
   * (commandTimeoutMs) still applies, and `droppedSince` still flags the answer as resent.
   */
  private resendable(error: unknown): boolean {
    return (
      this.client instanceof Cluster &&
      this.client.status !== 'end' &&
      error instanceof Error &&
      error.message === CONNECTION_CLOSED
    );
  }
}
