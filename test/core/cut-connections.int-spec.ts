import type { RedisAckQueueService } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { onCluster, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Every connection of the queue cut at once: nothing fails for it, nothing is stored twice. */
describe('cut connections', () => {
  const fx = useRedis();
  expectLogs(/^Lost the connection to Redis/);
  const killAll = () =>
    Promise.all(fx.nodes().map((node) => node.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')));

  it('pushes sent before, during and right after a CLIENT KILL of every connection all resolve, each stored once', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const ids: string[] = [];
    for (let round = 0; round < 10; round++) {
      const pushes = [0, 1, 2].map((k) => `r${round}-${k}`);
      const sent = [queue.push(topic, round, { id: pushes[0] })];
      const killed = killAll();
      sent.push(queue.push(topic, round, { id: pushes[1] }));
      await killed;
      sent.push(queue.push(topic, round, { id: pushes[2] }));
      const results = await Promise.all(sent);
      expect(results.map((r) => r.id)).toEqual(pushes);
      ids.push(...pushes);
    }
    expect((await queue.stats(topic)).ready).toBe(ids.length);
  });

  /**
   * Pushes 'held' while CLIENT PAUSE (`mode`) holds the topic's master, drops every connection of
   * the queue's Cluster client meanwhile, and answers how many messages the topic then holds.
   * `before` runs first, on another topic or this one.
   */
  async function pushAcrossDrop(
    mode: 'WRITE' | 'ALL',
    before: (queue: RedisAckQueueService, topic: string) => Promise<unknown>,
  ) {
    const client = fx.cluster.client();
    const queue = await fx.service({ connection: client });
    const topic = uniqueTopic();
    const master = (await fx.cluster.nodeForKey(`{ackq:${topic}}`)).client();
    try {
      await before(queue, topic);
      await master.call('CLIENT', 'PAUSE', '300', mode);
      const held = queue.push(topic, 'held', { id: 'held' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      client.disconnect(true);
      await expect(held).resolves.toMatchObject({ id: 'held', duplicate: false });
      return (await queue.stats(topic)).ready;
    } finally {
      master.disconnect();
      client.disconnect();
    }
  }

  (onCluster ? it : it.skip)(
    'a Cluster whose every connection drops while a push waits for its answer sends the push again once it reconnects',
    async () => {
      // Held by CLIENT PAUSE, the push is in flight when the connections drop. ioredis' Cluster
      // fails it with "Connection is closed." when it is not 'ready' then (a plain client resends).
      expect(await pushAcrossDrop('WRITE', (queue, topic) => queue.push(topic, 'first'))).toBe(2);
    },
  );

  (onCluster ? it : it.skip)(
    "a topic's first push, whose layout check is in flight when every Cluster connection drops, is sent again too",
    async () => {
      // The first push on a topic reads its partition count before its script: CLIENT PAUSE ALL
      // holds that read, so the drop lands on it rather than on the script.
      expect(await pushAcrossDrop('ALL', (queue) => queue.push(uniqueTopic(), 'connected'))).toBe(1);
    },
  );
});
