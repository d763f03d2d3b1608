import type { Redis } from 'ioredis';
import { expectLogs } from '../support/capture-logs';
import { eventually, singleServerOnly, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * The consumers' pub/sub connection (cancel notices) across reconnects. Jest fails the test
 * that is running when a promise is rejected with no handler, as Node ends a process by default:
 * each test here would fail if a subscription the connection sends again after a reconnect
 * were left without one.
 */
const only = singleServerOnly('a Cluster subscribes again through a node of its choice, in ioredis');

only.describe('pub/sub subscriptions across reconnects', () => {
  const fx = useRedis({ password: 'admin-pw' });
  expectLogs(/^Lost the connection to Redis/, /came back without the data/);
  const admin = () => fx.redis as Redis;
  /** Lets the replies that arrived settle their promises (an unhandled rejection shows in these turns). */
  const settleTurns = async () => {
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  };

  it('survives a subscription that Redis refuses after a reconnect (an ACL no longer allows it)', async () => {
    await admin().acl('SETUSER', 'subscriber', 'on', '>subscriber-pw', '~*', '&*', '+@all');
    const queue = await fx.service({
      connection: `redis://subscriber:subscriber-pw@127.0.0.1:${fx.server.port}`,
      leaseMs: 60_000,
    });
    const topic = uniqueTopic();
    const seen: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void seen.push(payload));
    await eventually(async () => (await admin().pubsub('CHANNELS', `*${topic}*`)).length > 0);
    await admin().acl('LOG', 'RESET');
    // Redis disconnects a subscriber whose channels its user may no longer use; it reconnects
    // and subscribes again, which Redis now refuses.
    await admin().acl('SETUSER', 'subscriber', 'resetchannels');
    await eventually(async () => {
      const log = (await admin().acl('LOG')) as unknown[][];
      return log.some((entry) => entry.includes('channel'));
    });
    await settleTurns();
    // The consumer goes on: only the instant cancel notices are missed (leases still end them).
    await queue.push(topic, 'after the refusal');
    await eventually(() => seen.length === 1);
    await consumer.close();
    await queue.close(0);
  });

  it('closes without an unhandled rejection right after Redis came back, whenever in the resubscribe', async () => {
    for (let round = 0; round < 20; round++) {
      const queue = await fx.service({ leaseMs: 1_000 });
      const topic = uniqueTopic();
      const consumer = queue.consume(topic, () => undefined);
      await queue.push(topic, round);
      await queue.waitUntilIdle(topic);
      await fx.server.restart();
      // Closing a little later each round: before, during and after the subscription is sent again.
      await new Promise((resolve) => setTimeout(resolve, round * 2));
      await consumer.close();
      await queue.close(0);
      await settleTurns();
    }
  });
});
