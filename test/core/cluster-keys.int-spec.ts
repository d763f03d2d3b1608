import { Cluster } from 'ioredis';
import { RedisAckQueueService } from '../../lib';
import { type QueueKeys, queueKeys } from '../../lib/engine/keys/queue-keys';
import { eventually, singleServerOnly, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * One cluster-enabled redis-server owning every slot: enough to prove that each script
 * touches one slot only (Redis Cluster refuses undeclared or cross-slot keys in scripts),
 * and that the service runs through an ioredis Cluster client. Multi-node clusters,
 * failover and partitions are the scale-out work.
 */
singleServerOnly('builds a one-node cluster of its own server').describe('keys and Redis Cluster', () => {
  const fx = useRedis({
    config: ['cluster-enabled', 'yes', 'cluster-config-file', 'nodes.conf', 'cluster-announce-ip', '127.0.0.1'],
  });
  let cluster: Cluster;
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    await fx.redis.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await eventually(async () => String(await fx.redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok'));
    cluster = new Cluster([{ host: '127.0.0.1', port: fx.server.port }]);
    queue = new RedisAckQueueService({ connection: cluster, prefix: 'shop' });
    await queue.connect();
  });

  afterAll(async () => {
    await queue.close(0);
    await cluster.quit();
  });

  it('puts every key of a topic in one hash slot, named by its prefix', async () => {
    const byName: Record<keyof QueueKeys, string> = queueKeys('shop', 'orders.eu');
    const keys = Object.values(byName);
    expect(keys.every((key) => key.startsWith('{shop:orders.eu}:'))).toBe(true);
    const slots = await Promise.all(keys.map((key) => fx.redis.call('CLUSTER', 'KEYSLOT', key)));
    expect(new Set(slots).size).toBe(1);
  });

  it('runs every operation through an ioredis Cluster client', async () => {
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2, maxAttempts: 1 }, { payload: 3, delayMs: 50 }]);
    const [first, second] = await queue.reserve<number>(topic, { count: 2 });
    expect(await queue.extendLease(first, 5_000)).toBe(true);
    expect(await queue.ack(first)).toBe(true);
    expect(await queue.nack(second, { error: new Error('no') })).toBe('dead');
    expect((await queue.deadLetters(topic)).map((d) => d.payload)).toEqual([2]);
    expect(await queue.requeueDead(topic)).toBe(1);
    const seen: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void seen.push(payload));
    await queue.waitUntilIdle(topic);
    expect(seen.sort()).toEqual([2, 3]);
    expect(await queue.purgeDead(topic)).toBe(0);
    await consumer.close();
  });
});
