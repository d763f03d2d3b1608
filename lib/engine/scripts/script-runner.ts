import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/connection';
import { sendCommand } from '../redis/redis-command';
import { defineQueueScripts, runQueueScript, type QueueScriptName, type ScriptKeys } from './queue-scripts';
import type { TopicLayout } from './topic-layouts';
import { QUEUE_SCRIPTS } from './script-table';

/**
 * Runs the queue's scripts on one client, turning failures into typed errors. It also
 * counts the client's dropped connections: ioredis resends a command whose reply was lost
 * to one, so an answer that arrives after a drop may be the second run of that command.
 */
export class ScriptRunner {
  private drops = 0;
  /** Date.now() of Redis' last answer to a script of each topic (what a consumer's health check reads). */
  private readonly answeredAt = new Map<string, number>();

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

  /**
   * With `eager` (the default), a call goes out at once when the client has no other call of the
   * queue outstanding: there is nothing to batch it with, and auto-pipelining would hold it until
   * the next check phase and build a pipeline for it alone (about 50 µs of CPU, as a pipeline
   * copies every script defined on the client). At low rates that was most of a message's way
   * from push to handler. A consumer's reserves pass false but for the first after a wait: a busy
   * consumer's reserves keep to auto-pipelining, which its throughput was tuned with.
   */
  run<T>(
    name: QueueScriptName,
    topic: string | undefined,
    keys: ScriptKeys,
    args: (string | number)[],
    eager = true,
  ): Promise<T> {
    const { operation } = QUEUE_SCRIPTS[name];
    const reply = sendCommand(this.client, operation, topic, (idle) =>
      runQueueScript<T>(this.client, name, keys, args, eager && idle),
    );
    if (topic === undefined) return reply;
    return reply.then((value) => {
      this.answeredAt.set(topic, Date.now());
      return value;
    });
  }

  /** Date.now() when Redis last answered a script of `topic`, whoever ran it; undefined before the first. */
  lastAnswerAt(topic: string): number | undefined {
    return this.answeredAt.get(topic);
  }

  /**
   * Wakes the consumers of a partitioned topic: they wait in its home slot, which none of its
   * partitions' scripts can reach. An unpartitioned topic's script woke them already.
   */
  async wakeHome(layout: TopicLayout): Promise<void> {
    if (layout.partitions.length > 1) await this.run('wake', layout.name, layout.home, []);
  }
}
