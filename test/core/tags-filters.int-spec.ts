import { InvalidOptionError, type MessageFilter, type MessageState, type RedisAckQueueService } from '../../lib';
import { partitionTags } from '../../lib/engine/keys/partitions';
import { mastersOf, uniqueTopic, useRedis, type TestClient } from '../support/queue-fixture';

const STATES: MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children'];

/** The Redis server's clock (ms), of the server that holds the topic's first slot. */
async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await (await mastersOf(redis))[0].time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Waits until every master's clock is past `ms`, so what is pushed next has a later push time. */
async function pastMs(redis: TestClient, ms: number): Promise<void> {
  for (const node of await mastersOf(redis)) {
    for (;;) {
      const [seconds, micros] = await node.time();
      if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > ms) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
}

describe('tags and filters: list and count by tag, push time and error text', () => {
  const fx = useRedis();

  /**
   * Four messages in each state: `<state>-a1`, `<state>-a2` tagged `a` (a2 also `shared`), `<state>-b1`
   * tagged `b`, `<state>-n1` untagged; dead ones failed with `boom <id>`. The flow parents' children
   * wait on another topic. Returns the ids of each state, in push order.
   */
  async function everyState(queue: RedisAckQueueService, topic: string) {
    const ids = (state: string) => ['a1', 'a2', 'b1', 'n1'].map((n) => `${state}-${n}`);
    const tagsOf = (id: string) =>
      id.endsWith('-a1') ? ['a'] : id.endsWith('-a2') ? ['a', 'shared'] : id.endsWith('-b1') ? ['b'] : undefined;
    const pushAll = (state: string, extra: object = {}) =>
      queue.pushMany(
        topic,
        ids(state).map((id) => ({ id, payload: id, ...extra, ...(tagsOf(id) && { tags: tagsOf(id) }) })),
      );
    // A partitioned topic's reserve may take from one partition a call: reserve until four are leased.
    const reserveFour = async () => {
      const leased = [];
      while (leased.length < 4)
        leased.push(...(await queue.reserve(topic, { count: 4 - leased.length, leaseMs: 600_000 })));
      return leased;
    };
    await pushAll('dead', { maxAttempts: 1 });
    for (const message of await reserveFour()) await queue.nack(message, { error: new Error(`boom ${message.id}`) });
    await pushAll('completed');
    for (const message of await reserveFour()) await queue.ack(message, 'done');
    await pushAll('leased');
    await reserveFour();
    await pushAll('delayed', { delayMs: 600_000 });
    await pushAll('ready');
    const children = uniqueTopic('children');
    for (const id of ids('waiting-children'))
      await queue.pushFlow({
        topic,
        id,
        payload: id,
        options: tagsOf(id) ? { tags: tagsOf(id) } : {},
        children: [{ topic: children, payload: 'child' }],
      });
    return ids;
  }

  const listed = async (queue: RedisAckQueueService, topic: string, state: MessageState, filter: MessageFilter) =>
    (await queue.list(topic, state, { ...filter, limit: 10_000 })).map((m) => m.id);
  /** The same, sorted: partitions merge rows pushed in the same ms in either order. */
  const listedSorted = async (...args: Parameters<typeof listed>) => (await listed(...args)).sort();

  describe.each([
    ['one slot', 1],
    ['a partitioned topic', 4],
  ])('%s', (_name, partitions) => {
    it('filters every state by tag; count equals the length of list', async () => {
      const topic = uniqueTopic();
      const queue = await fx.service({ keepCompleted: true, topics: { [topic]: { partitions } } });
      const ids = await everyState(queue, topic);
      for (const state of STATES) {
        const [a1, a2, b1, n1] = ids(state);
        expect([state, await listedSorted(queue, topic, state, { tag: 'a' })]).toEqual([state, [a1, a2]]);
        expect([state, await listed(queue, topic, state, { tag: 'shared' })]).toEqual([state, [a2]]);
        expect([state, await listed(queue, topic, state, { tag: 'b' })]).toEqual([state, [b1]]);
        expect([state, await listed(queue, topic, state, { tag: 'none' })]).toEqual([state, []]);
        expect([state, await queue.count(topic, state, { tag: 'a' })]).toEqual([state, 2]);
        expect([state, await queue.count(topic, state, { tag: 'none' })]).toEqual([state, 0]);
        expect([state, await queue.count(topic, state)]).toEqual([state, 4]);
        // Without a filter, list and count agree too, and the rows show their tags.
        const all = await queue.list(topic, state, { limit: 100 });
        expect([state, all.map((m) => m.id).sort()]).toEqual([state, [a1, a2, b1, n1].sort()]);
        const tagsById = Object.fromEntries(all.map((m) => [m.id, m.tags]));
        expect([state, tagsById]).toEqual([
          state,
          { [a1]: ['a'], [a2]: ['a', 'shared'], [b1]: ['b'], [n1]: undefined },
        ]);
        expect((await queue.get(topic, a2))?.tags).toEqual(['a', 'shared']);
        expect((await queue.get(topic, n1))?.tags).toBeUndefined();
        // A page of a filtered list is the same slice of its whole.
        const whole = await listed(queue, topic, state, { tag: 'a' });
        const page = await queue.list(topic, state, { tag: 'a', offset: 1, limit: 1 });
        expect([state, page.map((m) => m.id)]).toEqual([state, whole.slice(1, 2)]);
      }
    });

    it('filters by push time and error text, alone and with a tag', async () => {
      const topic = uniqueTopic();
      const queue = await fx.service({ topics: { [topic]: { partitions } } });
      const push = async (id: string, tags: string[]) => {
        await queue.push(topic, id, { id, maxAttempts: 1, tags });
        const [message] = await queue.reserve(topic, { leaseMs: 60_000 });
        await queue.nack(message, { error: new Error(id.includes('timeout') ? 'upstream timeout' : 'bad input') });
        // Dead letters list oldest first by the millisecond they died; two in the same one list by id.
        await pastMs(fx.redis, await serverNow(fx.redis));
      };
      await push('early-timeout', ['t']);
      await push('early-bad', ['t']);
      const cut = await serverNow(fx.redis);
      await pastMs(fx.redis, cut);
      await push('late-timeout', ['t']);
      await push('late-bad', ['t']);
      await push('late-timeout-other', ['u']);
      await queue.push(topic, 'ready', { id: 'late-ready', tags: ['t'] });

      const dead = (filter: MessageFilter) => listed(queue, topic, 'dead', filter);
      expect(await dead({ to: cut })).toEqual(['early-timeout', 'early-bad']);
      expect(await dead({ from: new Date(cut + 1) })).toEqual(['late-timeout', 'late-bad', 'late-timeout-other']);
      expect(await dead({ errorContains: 'timeout' })).toEqual(['early-timeout', 'late-timeout', 'late-timeout-other']);
      expect(await dead({ tag: 't', from: cut + 1, errorContains: 'timeout' })).toEqual(['late-timeout']);
      expect(await dead({ tag: 't', to: cut, errorContains: 'bad' })).toEqual(['early-bad']);
      expect(await dead({ errorContains: '%a' })).toEqual([]); // plain text, not a pattern
      expect(await queue.count(topic, 'dead', { tag: 't', from: cut + 1, errorContains: 'timeout' })).toBe(1);
      expect(await queue.count(topic, 'dead', { errorContains: 'timeout' })).toBe(3);
      // No other state has an error text: none matches errorContains.
      expect(await queue.count(topic, 'ready', { errorContains: 'timeout' })).toBe(0);
      expect(await listed(queue, topic, 'ready', { tag: 't', from: cut + 1 })).toEqual(['late-ready']);
      expect(await listed(queue, topic, 'ready', { from: cut + 1 })).toEqual(['late-ready']);
      expect(await queue.count(topic, 'ready', { to: cut })).toBe(0);
    });
  });

  it('walks a state larger than one batch: count and pages agree with what was pushed', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    const ids = Array.from({ length: 2_500 }, (_, i) => `m-${String(i).padStart(4, '0')}`);
    await queue.pushMany(
      topic,
      ids.map((id, i) => ({ id, payload: i, ...(i % 3 === 0 && { tags: ['third'] }) })),
    );
    const thirds = ids.filter((_, i) => i % 3 === 0);
    expect(await queue.count(topic, 'ready', { tag: 'third' })).toBe(thirds.length);
    expect(await queue.count(topic, 'ready', { from: 0 })).toBe(2_500);
    const page = await queue.list(topic, 'ready', { tag: 'third', offset: 800, limit: 30 });
    expect(page.map((m) => m.id).sort()).toEqual(thirds.slice(800, 830).sort());
    // Without a tag, in serving order, across the batches of the walk.
    const ranged = await queue.list(topic, 'ready', { from: 0, offset: 990, limit: 20 });
    expect(ranged.map((m) => m.id)).toEqual(ids.slice(990, 1_010));
  });

  /** Every key of the topic's partitions that names the tag, and every member or field naming the id. */
  async function tagTraces(topic: string, tag: string, id: string, partitions = 1) {
    const traces: string[] = [];
    for (const hashTag of partitions === 1 ? [`ackq:${topic}`] : partitionTags('ackq', topic, partitions)) {
      const index = `{${hashTag}}:tag:${tag}`;
      if ((await fx.redis.exists(index)) === 1) {
        traces.push(index);
        if ((await fx.redis.zscore(index, id)) !== null) traces.push(`${index} ${id}`);
      }
      if ((await fx.redis.hexists(`{${hashTag}}:tags`, id)) === 1) traces.push(`{${hashTag}}:tags ${id}`);
    }
    return traces;
  }

  it("ends a tag's index with its message: acked, cancelled, purged, trimmed by the dead-letter bound", async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ deadLetters: { maxCount: 1 } });
    // Acked (no completed record kept).
    await queue.push(topic, 1, { id: 'acked', tags: ['acked-tag'] });
    const [leased] = await queue.reserve(topic);
    expect(await tagTraces(topic, 'acked-tag', 'acked')).toEqual([
      `{ackq:${topic}}:tag:acked-tag`,
      `{ackq:${topic}}:tag:acked-tag acked`,
      `{ackq:${topic}}:tags acked`,
    ]);
    await queue.ack(leased);
    expect(await tagTraces(topic, 'acked-tag', 'acked')).toEqual([]);
    // Cancelled, in each of ready and delayed.
    await queue.push(topic, 2, { id: 'cancelled', tags: ['gone'] });
    await queue.push(topic, 3, { id: 'cancelled-later', tags: ['gone'], delayMs: 600_000 });
    await queue.cancel(topic, 'cancelled');
    expect(await tagTraces(topic, 'gone', 'cancelled')).toEqual([
      `{ackq:${topic}}:tag:gone`, // still holds cancelled-later
    ]);
    await queue.cancel(topic, 'cancelled-later');
    expect(await tagTraces(topic, 'gone', 'cancelled-later')).toEqual([]);
    // Dead, then trimmed by the bound (maxCount 1) as a later one dies; then purged.
    for (const id of ['dead-1', 'dead-2']) {
      await queue.push(topic, id, { id, maxAttempts: 1, tags: [id] });
      const [message] = await queue.reserve(topic);
      await queue.nack(message, { error: new Error('boom') });
    }
    expect(await tagTraces(topic, 'dead-1', 'dead-1')).toEqual([]);
    expect(await queue.count(topic, 'dead', { tag: 'dead-2' })).toBe(1);
    expect(await queue.purgeDead(topic)).toBe(1);
    expect(await tagTraces(topic, 'dead-2', 'dead-2')).toEqual([]);
    expect(await queue.count(topic, 'dead', { tag: 'dead-2' })).toBe(0);
    // A completed record keeps its tags until the completed bound (maxCount 1) trims it.
    const kept = uniqueTopic();
    const keeping = await fx.service({ keepCompleted: { maxCount: 1 } });
    for (const id of ['done-1', 'done-2']) {
      await keeping.push(kept, id, { id, tags: [id] });
      const [message] = await keeping.reserve(kept);
      await keeping.ack(message);
    }
    expect(await tagTraces(kept, 'done-1', 'done-1')).toEqual([]);
    expect(await tagTraces(kept, 'done-2', 'done-2')).toEqual([
      `{ackq:${kept}}:tag:done-2`,
      `{ackq:${kept}}:tag:done-2 done-2`,
      `{ackq:${kept}}:tags done-2`,
    ]);
    expect(await keeping.list(kept, 'completed', { tag: 'done-2' })).toEqual([
      expect.objectContaining({ id: 'done-2', state: 'completed', tags: ['done-2'] }),
    ]);
  });

  it('refuses a filter of the wrong shape with InvalidOptionError, never quoting the tag or searched text', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service();
    await queue.push(topic, 1, { id: 'kept', tags: ['x'] });
    const secret = 'secret-value-42';
    const bad: [string, unknown][] = [
      ['tag', { tag: 42 }],
      ['tag', { tag: '' }],
      ['tag', { tag: `${secret}\n` }],
      ['tag', { tag: secret.repeat(10) }],
      ['to', { from: 2_000, to: 1_000 }],
      ['from', { from: -1 }],
      ['from', { from: new Date(Number.NaN) }],
      ['to', { to: 'tomorrow' }],
      ['errorContains', { errorContains: secret.repeat(100) }],
      ['errorContains', { errorContains: '' }],
      ['filter', secret],
      ['filter', [secret]],
    ];
    for (const [option, filter] of bad) {
      for (const call of [
        () => queue.count(topic, 'ready', filter as MessageFilter),
        () =>
          queue.list(
            topic,
            'ready',
            typeof filter === 'object' && !Array.isArray(filter) ? (filter as MessageFilter) : (filter as never),
          ),
      ]) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect([option, (error as InvalidOptionError).option]).toEqual([
          option,
          option === 'filter' ? 'filter' : option,
        ]);
        expect((error as Error).message).not.toContain(secret);
        expect((error as InvalidOptionError).value).not.toEqual(expect.stringContaining(secret));
      }
    }
    expect(await queue.count(topic, 'ready', { tag: 'x' })).toBe(1);
    await expect(queue.count(topic, 'nowhere' as MessageState)).rejects.toBeInstanceOf(InvalidOptionError);
  });
  it('lists a page of 10,000 rows, ready and dead, with and without a tag (one command takes at most 1,000 ids)', async () => {
    const queue = await fx.service({ deadLetters: { maxCount: 20_000 } });
    const topic = uniqueTopic('page-10k');
    const items = Array.from({ length: 10_500 }, (_, i) => ({ payload: i, tags: ['t'], maxAttempts: 1 }));
    for (let i = 0; i < items.length; i += 2_000) await queue.pushMany(topic, items.slice(i, i + 2_000));
    expect(await queue.list(topic, 'ready', { limit: 10_000 })).toHaveLength(10_000);
    expect(await queue.list(topic, 'ready', { limit: 10_000, tag: 't' })).toHaveLength(10_000);
    for (let left = items.length; left > 0;) {
      const leased = await queue.reserve(topic, { count: 1_000 });
      await Promise.all(leased.map((message) => queue.nack(message, { error: 'boom' })));
      left -= leased.length;
    }
    expect(await queue.list(topic, 'dead', { limit: 10_000 })).toHaveLength(10_000);
    expect(await queue.list(topic, 'dead', { limit: 10_000, tag: 't', errorContains: 'boom' })).toHaveLength(10_000);
    expect(await queue.count(topic, 'dead', { tag: 't' })).toBe(10_500);
  });
});
