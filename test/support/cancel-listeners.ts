import type { Redis } from 'ioredis';
import { eventually } from './queue-fixture';

/**
 * Resolves once some node has a subscriber on the cancel channel of a one-partition topic
 * (`{<prefix>:<topic>}:cancelled`), so that a cancel from now on reaches the running handler's
 * `signal` by pub/sub rather than at its next heartbeat. test/consumer/job-control.int-spec.ts has
 * the same wait for partitioned topics.
 */
export async function untilCancelListened(nodes: Redis[], topic: string, prefix = 'ackq'): Promise<void> {
  const channel = `{${prefix}:${topic}}:cancelled`;
  await eventually(async () => {
    const replies = await Promise.all(
      nodes.map((node) => node.call('PUBSUB', 'NUMSUB', channel) as Promise<(string | number)[]>),
    );
    return replies.some((reply) => Number(reply[1]) > 0);
  });
}
