import type { Redis } from 'ioredis';
import { partitionTags } from '../../lib/engine/keys/partitions';
import { eventually } from './queue-fixture';

/**
 * Resolves once some node has a subscriber on every cancel channel of the topic
 * (`{<prefix>:<topic>}:cancelled`, one per partition), so that a cancel from now on reaches the
 * running handler's `signal` by pub/sub rather than at its next heartbeat.
 */
export async function untilCancelListened(
  nodes: Redis[],
  topic: string,
  partitions = 1,
  prefix = 'ackq',
): Promise<void> {
  const channels = partitionTags(prefix, topic, partitions).map((tag) => `{${tag}}:cancelled`);
  await eventually(async () => {
    const counts = await Promise.all(
      nodes.map((node) => node.call('PUBSUB', 'NUMSUB', ...channels) as Promise<(string | number)[]>),
    );
    return channels.every((_, i) => counts.some((reply) => Number(reply[2 * i + 1]) > 0));
  });
}
