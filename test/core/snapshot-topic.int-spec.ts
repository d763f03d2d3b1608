import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * The helper every "changes nothing" test compares: a history recorder writes on its own timer, so its
 * flush may land between a test's two snapshots on a busy machine (key-modes.int-spec.ts failed so).
 */
describe('snapshotTopic', () => {
  const fx = useRedis();

  it("leaves out the history hash, which a recorder's flush may change between two snapshots", async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ history: false });
    await queue.push(topic, 'stored');
    const before = await snapshotTopic(fx.redis, topic);
    const withHistoryBefore = await snapshotTopic(fx.redis, topic, 'ackq', { history: true });
    // What a recorder's flush does at that moment: a minute's record in the topic's history hash.
    await fx.redis.hset(`{ackq:${topic}}:history`, '7', '29000007|1|0|0|0|0|0|0||');
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    // With history: true the write shows: the tests of history itself still see it.
    const withHistoryAfter = await snapshotTopic(fx.redis, topic, 'ackq', { history: true });
    expect(withHistoryAfter).toEqual({
      ...withHistoryBefore,
      [`{ackq:${topic}}:history`]: { 7: '29000007|1|0|0|0|0|0|0||' },
    });
  });
});
