import { RedisAckQueueService } from '../../lib';
import { runCliHere } from '../support/cli-runs';
import { uniqueTopic } from '../support/queue-fixture';
import { RedisCluster } from '../../support/redis-processes/redis-cluster';

describe('redis-ack-queue CLI on Redis Cluster', () => {
  let cluster: RedisCluster;
  let queue: RedisAckQueueService;
  const plain = uniqueTopic('plain');
  const parted = uniqueTopic('parted');

  beforeAll(async () => {
    cluster = await RedisCluster.start();
    queue = new RedisAckQueueService({
      connection: { cluster: cluster.seeds },
      prefix: 'clicl',
      topics: { [parted]: { partitions: 3 } },
      logLevel: 'error',
    });
    await queue.connect();
  });

  afterAll(async () => {
    await queue?.close();
    await cluster?.stop();
  });

  const run = (args: string[], env: Record<string, string> = {}) => runCliHere(['--prefix', 'clicl', ...args], env);

  it('lists topics and stats of plain and partitioned topics through --cluster or REDIS_CLUSTER', async () => {
    await queue.push(plain, 1);
    await queue.pushMany(
      parted,
      Array.from({ length: 6 }, (_, i) => ({ payload: i })),
    );
    const seeds = cluster.seeds.map((node) => `${node.host}:${node.port}`).join(',');
    expect(await run(['--cluster', seeds, 'topics'])).toEqual({
      code: 0,
      stdout: `${[plain, parted].sort().join('\n')}\n`,
      stderr: '',
    });
    const stats = await run(['stats', '--json'], { REDIS_CLUSTER: seeds });
    expect(JSON.parse(stats.stdout)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ topic: plain, ready: 1 }),
        expect.objectContaining({ topic: parted, ready: 6 }),
      ]),
    );
    expect((await run(['--cluster', 'not-a-seed', 'topics'])).code).toBe(2);
  });
});
