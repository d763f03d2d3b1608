import { randomUUID } from 'node:crypto';
import { InvalidOptionError, type Flow, type MessageContext, type RedisAckQueueService } from '../../lib';
import { partitionTags } from '../../lib/engine/keys/partitions';
import { tagKeys } from '../../lib/engine/keys/queue-keys';
import type { QueueFlows } from '../../lib/queue/queue-flows';
import type { QueueProducer, RelayedPush } from '../../lib/queue/queue-producer';
import { commandCounts, eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * The outbox relay's receipts (push.lua, push-keyed.lua, prelude-receipts.lua, receipts-forget.lua),
 * against real Redis: a row's receipt is recorded with its push, in the same script call, and a
 * second push under it (a relay that died before its database commit) changes nothing, whatever
 * became of the message meanwhile.
 */
describe('relay receipts: a row pushed once', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;
  beforeAll(async () => {
    queue = await fx.service();
  });

  /** The service's parts the relay uses (not public API). */
  const partsOf = (service: RedisAckQueueService) =>
    service as unknown as { producer: QueueProducer; flows: QueueFlows };
  const producer = () => partsOf(queue).producer;

  /** The receipts a partition holds, receipt -> ms. */
  const receiptsIn = async (topic: string, partition = 0, count = 1): Promise<Record<string, number>> => {
    const key = tagKeys(partitionTags('ackq', topic, count)[partition]).relayReceipts;
    const scored = await fx.redis.zrange(key, '0', '-1', 'WITHSCORES');
    const found: Record<string, number> = {};
    for (let i = 0; i < scored.length; i += 2) found[scored[i]] = Number(scored[i + 1]);
    return found;
  };
  const serverMs = async () => {
    const [s, us] = await fx.redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  /** Takes and acks every message of `topic` (their ids are free again). */
  const drain = async (service: RedisAckQueueService, topic: string) => {
    for (;;) {
      const leased = await service.reserve(topic, { count: 50 });
      if (leased.length === 0) return;
      for (const message of leased) expect(await service.ack(message)).toBe(true);
    }
  };
  const results = (pushes: RelayedPush[]) => pushes.map(({ result }) => result);

  it('records the receipt with the push; the same receipt after the ack is refused and changes nothing', async () => {
    const topic = uniqueTopic('relay');
    const receipt = randomUUID();
    const pushed: (string | undefined)[] = [];
    const subscription = queue.events$.subscribe((event) => {
      if (event.type === 'pushed' && event.topic === topic) pushed.push(event.id);
    });
    const before = await serverMs();
    const [first] = await producer().pushRelayed(topic, [{ payload: { n: 1 }, id: 'row-1' }], [receipt]);
    expect(first).toEqual({ result: { id: 'row-1', duplicate: false }, partition: 0 });
    const held = await receiptsIn(topic);
    expect(Object.keys(held)).toEqual([receipt]);
    expect(held[receipt]).toBeGreaterThanOrEqual(before);
    await drain(queue, topic);
    expect(await queue.get(topic, 'row-1')).toBeNull();

    const snapshot = await snapshotTopic(fx.redis, topic);
    const again = await producer().pushRelayed(topic, [{ payload: { n: 1 }, id: 'row-1' }], [receipt]);
    expect(results(again)).toEqual(['relayed-before']);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(snapshot);
    expect(await queue.get(topic, 'row-1')).toBeNull();
    // Without an id (a new one each time) the receipt alone refuses it.
    const fresh = await producer().pushRelayed(topic, [{ payload: { n: 1 } }], [receipt]);
    expect(results(fresh)).toEqual(['relayed-before']);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(snapshot);
    subscription.unsubscribe();
    expect(pushed).toEqual(['row-1']);
  });

  it('records the receipt of a duplicate by id too, and refuses a second receipt alike in one call', async () => {
    const topic = uniqueTopic('relay-dup');
    await queue.push(topic, 'x', { id: 'taken' });
    const [r1, r2] = [randomUUID(), randomUUID()];
    const answers = await producer().pushRelayed(
      topic,
      [
        { payload: 'y', id: 'taken' },
        { payload: 'z', id: 'new' },
        { payload: 'z', id: 'other' },
      ],
      [r1, r2, r2],
    );
    expect(results(answers)).toEqual([
      { id: 'taken', duplicate: true },
      { id: 'new', duplicate: false },
      'relayed-before',
    ]);
    expect(Object.keys(await receiptsIn(topic)).sort()).toEqual([r1, r2].sort());
    expect(await queue.get(topic, 'other')).toBeNull();
  });

  it('covers delayed, priority, grouped, deadline and tagged messages: each refused the second time, nothing changed', async () => {
    const topic = uniqueTopic('relay-kinds');
    const items = [
      { payload: 1, delayMs: 60_000 },
      { payload: 2, priority: 5 },
      { payload: 3, group: 'g1' },
      { payload: 4, expiresInMs: 60_000, onExpire: 'drop' as const },
      { payload: 5, startBy: new Date(Date.now() + 3_600_000), tags: ['tenant:1'] },
      { payload: 6, headers: { h: 'v' }, maxAttempts: 2 },
    ];
    const receipts = items.map(() => randomUUID());
    const first = await producer().pushRelayed(topic, items, receipts);
    expect(first.every(({ result }) => result !== 'relayed-before' && result.duplicate === false)).toBe(true);
    expect(Object.keys(await receiptsIn(topic)).sort()).toEqual([...receipts].sort());
    expect((await queue.stats(topic)).delayed).toBe(1);

    const snapshot = await snapshotTopic(fx.redis, topic);
    const again = await producer().pushRelayed(topic, items, receipts);
    expect(results(again)).toEqual(items.map(() => 'relayed-before'));
    expect(await snapshotTopic(fx.redis, topic)).toEqual(snapshot);

    // A relayed-before message is left out of the checks too: a startBy now past is no error.
    const late = await producer().pushRelayed(
      topic,
      [{ payload: 5, startBy: new Date(Date.now() - 1_000) }],
      [receipts[4]],
    );
    expect(results(late)).toEqual(['relayed-before']);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(snapshot);
  });

  it('covers keyed pushes: debounced, throttled and superseded rows record their receipts, and are refused again', async () => {
    const topic = uniqueTopic('relay-keyed');
    const [d1, d2, t1, t2, s1, s2] = Array.from({ length: 6 }, () => randomUUID());
    const debounce = { key: 'k', mode: 'debounce' as const, delayMs: 60_000 };
    const throttle = { key: 'k', mode: 'throttle' as const, windowMs: 60_000 };
    const supersede = { key: 'k', mode: 'supersede' as const, running: 'keep' as const };
    const first = await producer().pushRelayed(
      topic,
      [
        { payload: 'd1', debounce },
        { payload: 'd2', debounce },
        { payload: 't1', throttle },
        { payload: 't2', throttle },
        { payload: 's1', supersede },
        { payload: 's2', supersede },
      ],
      [d1, d2, t1, t2, s1, s2],
    );
    const codes = results(first).map((result) =>
      result === 'relayed-before'
        ? result
        : 'debounced' in result
          ? 'debounced'
          : 'superseded' in result
            ? 'superseded'
            : result.duplicate
              ? 'duplicate'
              : 'stored',
    );
    expect(codes).toEqual(['stored', 'debounced', 'stored', 'duplicate', 'stored', 'superseded']);
    expect(Object.keys(await receiptsIn(topic)).sort()).toEqual([d1, d2, t1, t2, s1, s2].sort());

    const snapshot = await snapshotTopic(fx.redis, topic);
    const again = await producer().pushRelayed(
      topic,
      [
        { payload: 'd2', debounce },
        { payload: 't2', throttle },
        { payload: 's2', supersede },
      ],
      [d2, t2, s2],
    );
    expect(results(again)).toEqual(['relayed-before', 'relayed-before', 'relayed-before']);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(snapshot);
    // Ready: the throttle's first and the superseding payload, once each (the debounced one waits).
    const leased = await queue.reserve(topic, { count: 10 });
    expect(leased.map(({ payload }) => payload)).toEqual(['t1', 's2']);
  });

  // The relay gives each row its stored id (a keyed row its key): an item of a partitioned topic
  // is checked in the partition its id (group, key) chooses.
  it("finds a partitioned topic's receipts in the partition each push answers", async () => {
    const topic = uniqueTopic('relay-parts');
    const partitioned = await fx.service({ topics: { [topic]: { partitions: 4 } } });
    const own = partsOf(partitioned).producer;
    const items = Array.from({ length: 16 }, (_, i) => ({
      payload: i,
      id: `row-${i}`,
      ...(i % 4 === 0 ? { group: `g${i}` } : {}),
    }));
    items.push({ payload: 99, debounce: { key: 'dk', mode: 'debounce', delayMs: 10 } } as never);
    const receipts = items.map(() => randomUUID());
    const pushes = await own.pushRelayed(topic, items, receipts);
    expect(new Set(pushes.map(({ partition }) => partition)).size).toBeGreaterThan(1);
    for (const [i, { partition, result }] of pushes.entries()) {
      expect(result).not.toBe('relayed-before');
      expect(Object.keys(await receiptsIn(topic, partition, 4))).toContain(receipts[i]);
    }
    const again = await own.pushRelayed(topic, items, receipts);
    expect(again.map(({ result }) => result)).toEqual(items.map(() => 'relayed-before'));
    expect(again.map(({ partition }) => partition)).toEqual(pushes.map(({ partition }) => partition));
    for (const [partition, group] of groupBy(pushes, receipts)) await own.forgetReceipts(topic, partition, group);
    for (let p = 0; p < 4; p++) expect(await receiptsIn(topic, p, 4)).toEqual({});
  });

  it('forgets receipts: the same row may then be pushed again; forgetting unknown ones is no error', async () => {
    const topic = uniqueTopic('relay-forget');
    const [r1, r2] = [randomUUID(), randomUUID()];
    const pushes = await producer().pushRelayed(topic, [{ payload: 1 }, { payload: 2 }], [r1, r2]);
    await producer().forgetReceipts(topic, pushes[0].partition, [r1, randomUUID()]);
    expect(Object.keys(await receiptsIn(topic))).toEqual([r2]);
    const again = await producer().pushRelayed(topic, [{ payload: 1 }], [r1]);
    expect(again[0].result).toMatchObject({ duplicate: false });
    await expect(producer().forgetReceipts(topic, 3, [r1])).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(producer().forgetReceipts(topic, 0, [''])).rejects.toBeInstanceOf(InvalidOptionError);
  });

  it('refuses bad receipts with InvalidOptionError, never quoting them, and changes nothing', async () => {
    const topic = uniqueTopic('relay-bad');
    await queue.push(topic, 'kept');
    const snapshot = await snapshotTopic(fx.redis, topic);
    const secret = 'secret-receipt';
    for (const receipts of [[secret], [secret, ''], [secret, 7], 'nope'] as unknown as string[][]) {
      const error = await producer()
        .pushRelayed(topic, [{ payload: 1 }, { payload: 2 }], receipts)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).not.toContain(secret);
    }
    expect(await snapshotTopic(fx.redis, topic)).toEqual(snapshot);
  });

  it('prunes receipts older than 7 days in calls that carry receipts, and only then', async () => {
    const topic = uniqueTopic('relay-prune');
    const key = tagKeys(partitionTags('ackq', topic, 1)[0]).relayReceipts;
    const now = await serverMs();
    const old = Array.from({ length: 150 }, (_, i) => `old-${i}`);
    await fx.redis.zadd(key, ...old.flatMap((r, i) => [now - 8 * 24 * 3_600_000 - i, r]));
    await fx.redis.zadd(key, now - 6 * 24 * 3_600_000, 'recent');
    await queue.push(topic, 'plain');
    expect(Object.keys(await receiptsIn(topic))).toHaveLength(151);
    const fresh = randomUUID();
    await producer().pushRelayed(topic, [{ payload: 1 }], [fresh]);
    // At most 100 a call, the oldest first.
    expect(Object.keys(await receiptsIn(topic))).toHaveLength(52);
    await producer().pushRelayed(topic, [{ payload: 2 }], [randomUUID()]);
    const left = Object.keys(await receiptsIn(topic));
    expect(left).toHaveLength(3);
    expect(left).toEqual(expect.arrayContaining(['recent', fresh]));
  });

  it("pushes a flow under its root's receipt: refused again after it ran, nothing of it runs twice", async () => {
    const [parent, child] = [uniqueTopic('relay-parent'), uniqueTopic('relay-child')];
    const service = await fx.service();
    const flows = partsOf(service).flows;
    const flow: Flow = {
      topic: parent,
      payload: 'p',
      children: [
        { topic: child, payload: 1 },
        { topic: child, payload: 2 },
      ],
    };
    const receipt = randomUUID();
    const first = await flows.pushFlowRelayed(flow, receipt);
    expect(first.result).not.toBe('relayed-before');
    expect(first.partition).toBe(0);
    expect(Object.keys(await receiptsIn(parent))).toEqual([receipt]);
    const runs: string[] = [];
    for (const topic of [parent, child])
      service.consume(topic, (payload: unknown, context: MessageContext) => void runs.push(`${topic}:${context.id}`));
    await eventually(() => runs.length === 3);
    await service.waitUntilIdle(parent);
    await eventually(
      async () => (await service.stats(child)).ready === 0 && (await service.stats(parent)).leased === 0,
    );
    const snapshots = [await snapshotTopic(fx.redis, parent), await snapshotTopic(fx.redis, child)];

    const again = await flows.pushFlowRelayed(flow, receipt);
    expect(again).toEqual({ result: 'relayed-before', partition: 0 });
    expect([await snapshotTopic(fx.redis, parent), await snapshotTopic(fx.redis, child)]).toEqual(snapshots);
    // A flow of one message too.
    const single = randomUUID();
    expect((await flows.pushFlowRelayed({ topic: parent, payload: 's' }, single)).result).not.toBe('relayed-before');
    expect((await flows.pushFlowRelayed({ topic: parent, payload: 's' }, single)).result).toBe('relayed-before');
    await eventually(() => runs.length === 4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(runs).toHaveLength(4);
  });

  it("records a flow's receipt when its root exists already (a duplicate), atomically at the root's push", async () => {
    const [parent, child] = [uniqueTopic('relay-fp'), uniqueTopic('relay-fc')];
    const flows = partsOf(queue).flows;
    const flow: Flow = {
      topic: parent,
      id: 'root',
      payload: 'p',
      children: [{ topic: child, id: 'leaf', payload: 1 }],
    };
    await queue.pushFlow(flow);
    const receipt = randomUUID();
    const first = await flows.pushFlowRelayed(flow, receipt);
    expect(first.result).toMatchObject({ id: 'root', duplicate: true });
    expect(Object.keys(await receiptsIn(parent))).toEqual([receipt]);
    expect((await flows.pushFlowRelayed(flow, receipt)).result).toBe('relayed-before');
  });

  it('costs a plain push no command more: no receipt key is read or written', async () => {
    const topic = uniqueTopic('relay-plain');
    const counter = await fx.service();
    await counter.push(topic, 'warm-up');
    await fx.closeServices();
    const measure = async (push: () => Promise<unknown>) => {
      const before = await commandCounts(fx.redis);
      await push();
      const after = await commandCounts(fx.redis);
      const delta: Record<string, number> = {};
      for (const [name, calls] of Object.entries(after)) {
        const d = calls - (before[name] ?? 0);
        if (d > 0 && name !== 'info') delta[name] = d;
      }
      return delta;
    };
    const service = await fx.service();
    const own = partsOf(service).producer;
    await service.push(topic, 'warm-up');
    await own.pushRelayed(topic, [{ payload: 'warm-up' }], [randomUUID()]);
    const plain = await measure(() => service.pushMany(topic, [{ payload: 1 }, { payload: 2 }]));
    expect(plain.zscore).toBeUndefined();
    expect(plain.zadd).toBeUndefined();
    expect(plain).toEqual(PLAIN_PUSH_COMMANDS);
    const relayed = await measure(() =>
      own.pushRelayed(topic, [{ payload: 1 }, { payload: 2 }], [randomUUID(), randomUUID()]),
    );
    // The receipts' own: a TYPE check, a ZSCORE each, the prune's ZRANGE and one ZADD.
    expect(relayed).toEqual({
      ...plain,
      type: (plain.type ?? 0) + 1,
      zscore: 2,
      zrange: (plain.zrange ?? 0) + 1,
      zadd: 1,
    });
  });
});

/**
 * What a plain pushMany of two messages to a topic pushed before sends (one script call and the
 * commands it runs), as measured before receipts existed: receipts must not add to it.
 */
const PLAIN_PUSH_COMMANDS: Record<string, number> = {
  evalsha: 1,
  time: 1,
  exists: 1,
  type: 5,
  llen: 1,
  zrange: 1,
  hsetnx: 2,
  hincrby: 1,
  rpush: 1,
};

/** Receipts grouped by the partition their push answered. */
function groupBy(pushes: RelayedPush[], receipts: string[]): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  pushes.forEach(({ partition }, i) => groups.set(partition, [...(groups.get(partition) ?? []), receipts[i]]));
  return groups;
}
