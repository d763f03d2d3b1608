import {
  FlowIdTakenError,
  InvalidOptionError,
  InvalidTopicError,
  type Flow,
  type MessageContext,
  type RedisAckQueueEvent,
  type RedisAckQueueService,
} from '../../lib';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/** What each handler saw, in the order the handlers ran. */
interface Run {
  topic: string;
  id: string;
  payload: unknown;
  results?: unknown;
  failed?: unknown;
}

describe('flows: parents that run after their children', () => {
  const fx = useRedis();
  expectLogs(/went to the dead letters/);

  function consumeAll(queue: RedisAckQueueService, topics: string[], runs: Run[], fail: Set<string> = new Set()) {
    for (const topic of topics) {
      queue.consume(
        topic,
        (payload: unknown, context: MessageContext) => {
          runs.push({
            topic,
            id: context.id,
            payload,
            results: context.childResults(),
            failed: context.failedChildren(),
          });
          if (fail.has(context.id)) throw new Error('refused by the test');
          return { from: context.id, payload };
        },
        { maxAttempts: 1, leaseMs: 30_000 },
      );
    }
  }

  /** A parent whose children, on `child`, are `ids` with payloads 1, 2, ... (`options` for each child by id). */
  function parentOf(parent: string, id: string, child: string, ids: string[], options: Flow['options'][] = []): Flow {
    return {
      topic: parent,
      id,
      payload: id,
      children: ids.map((childId, i) => ({
        topic: child,
        id: childId,
        payload: i + 1,
        ...(options[i] ? { options: options[i] } : {}),
      })),
    };
  }

  /** Polls until `id` of `topic` is dead (a parent is sent there as child-failed), and reads it. */
  async function untilDead(queue: RedisAckQueueService, topic: string, id: string) {
    await eventually(async () => (await queue.get(topic, id))?.state === 'dead', 20_000);
    return (await queue.get(topic, id))!;
  }

  /** No message and no flow key is left on these topics (the flow sequence counter may stay). */
  async function expectNothingLeft(topics: string[]) {
    for (const topic of topics) {
      const left = Object.keys(await snapshotTopic(fx.redis, topic)).filter((key) =>
        /flow(?!-sequence)|:messages$/.test(key),
      );
      expect(left).toEqual([]);
    }
  }

  it('runs a 3-level flow over three topics children first, the parent once with every child result', async () => {
    const [book, chapter, page] = [uniqueTopic('book'), uniqueTopic('chapter'), uniqueTopic('page')];
    const queue = await fx.service();
    const flow: Flow = {
      topic: book,
      id: 'b1',
      payload: { book: 1 },
      children: [1, 2].map((c) => ({
        topic: chapter,
        id: `c${c}`,
        payload: { chapter: c },
        children: [1, 2, 3].map((p) => ({ topic: page, id: `c${c}p${p}`, payload: { page: p } })),
      })),
    };
    const tree = await queue.pushFlow(flow);
    expect(tree).toEqual({
      topic: book,
      id: 'b1',
      duplicate: false,
      children: [1, 2].map((c) => ({
        topic: chapter,
        id: `c${c}`,
        duplicate: false,
        children: [1, 2, 3].map((p) => ({ topic: page, id: `c${c}p${p}`, duplicate: false, children: [] })),
      })),
    });
    expect(await queue.get(book, 'b1')).toMatchObject({ state: 'waiting-children' });
    expect((await queue.stats(book)).waitingChildren).toBe(1);
    expect((await queue.stats(book)).delayed).toBe(0);
    expect((await queue.list(chapter, 'waiting-children')).map(({ id }) => id).sort()).toEqual(['c1', 'c2']);

    const runs: Run[] = [];
    consumeAll(queue, [book, chapter, page], runs);
    await eventually(() => runs.some((run) => run.topic === book), 20_000);
    await eventually(async () => (await queue.get(book, 'b1')) === null);

    const order = runs.map(({ id }) => id);
    expect(order).toHaveLength(9);
    expect(order.at(-1)).toBe('b1');
    for (const c of [1, 2]) {
      const at = order.indexOf(`c${c}`);
      for (const p of [1, 2, 3]) expect(order.indexOf(`c${c}p${p}`)).toBeLessThan(at);
    }
    const chapterRun = runs.find(({ id }) => id === 'c1')!;
    expect(chapterRun.results).toEqual({
      [page]: Object.fromEntries([1, 2, 3].map((p) => [`c1p${p}`, { from: `c1p${p}`, payload: { page: p } }])),
    });
    const bookRun = runs.find(({ id }) => id === 'b1')!;
    expect(bookRun.results).toEqual({
      [chapter]: {
        c1: { from: 'c1', payload: { chapter: 1 } },
        c2: { from: 'c2', payload: { chapter: 2 } },
      },
    });
    expect(bookRun.failed).toEqual([]);
    // Nothing of the flow is left in Redis.
    await expectNothingLeft([book, chapter, page]);
  });

  it('dead-letters the parent as child-failed when a child dies, and brings it back when the child is requeued', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const runs: Run[] = [];
    const fail = new Set(['bad']);
    consumeAll(queue, [parent, child], runs, fail);
    await queue.pushFlow(parentOf(parent, 'p', child, ['good', 'bad']));
    const dead = await untilDead(queue, parent, 'p');
    expect(dead.reason).toBe('child-failed');
    expect(dead.error).toContain('bad');
    expect(runs.some(({ id }) => id === 'p')).toBe(false);
    const flow = await queue.getFlow(parent, 'p');
    expect(flow).toMatchObject({
      state: 'dead',
      children: expect.arrayContaining([
        expect.objectContaining({ id: 'good', state: 'completed', result: { from: 'good', payload: 1 } }),
        expect.objectContaining({
          id: 'bad',
          state: 'dead',
          failure: expect.objectContaining({ reason: 'failed' }) as unknown,
        }),
      ]) as unknown,
    });

    fail.clear();
    await queue.requeueDead(child, ['bad']);
    await eventually(() => runs.some(({ id }) => id === 'p'), 20_000);
    const run = runs.find(({ id }) => id === 'p')!;
    expect(run.results).toEqual({
      [child]: { good: { from: 'good', payload: 1 }, bad: { from: 'bad', payload: 2 } },
    });
    expect(runs.filter(({ id }) => id === 'p')).toHaveLength(1);
  });

  it('reports a parent dead as child-failed as any dead letter: a dead event and an error line where the child ended, a count in history', async () => {
    expectLogs(/went to the dead letters/);
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service({ logLevel: 'error' });
    const events: RedisAckQueueEvent[] = [];
    const subscription = queue.events$.subscribe((event) => event.type === 'dead' && events.push(event));
    const runs: Run[] = [];
    consumeAll(queue, [child], runs, new Set(['bad']));
    await queue.pushFlow(parentOf(parent, 'p', child, ['good', 'bad']));
    await untilDead(queue, parent, 'p');
    // A cancel of a child fails its parent in the process that cancelled it.
    await queue.pushFlow(parentOf(parent, 'q', child, ['d1'], [{ delayMs: 600_000 }]));
    await queue.cancel(child, 'd1');
    await eventually(() => events.filter(({ topic }) => topic === parent).length === 2);
    subscription.unsubscribe();
    expect(events.filter(({ topic }) => topic === parent)).toEqual([
      expect.objectContaining({ type: 'dead', topic: parent, id: 'p', attempt: 0, reason: 'child-failed' }),
      expect.objectContaining({ type: 'dead', topic: parent, id: 'q', attempt: 0, reason: 'child-failed' }),
    ]);
    expect(events.find(({ id }) => id === 'p')?.error?.message).toContain(`message bad of "${child}" (failed)`);
    const lines = loggedLines().filter(({ message }) => message.includes(`of "${parent}"`));
    expect(lines.map(({ level, message }) => [level, message])).toEqual([
      ['error', expect.stringMatching(`^Flow parent p of "${parent}" went to the dead letters as child-failed: `)],
      ['error', expect.stringMatching(`^Flow parent q of "${parent}" went to the dead letters as child-failed: `)],
    ]);
    await queue.close();
    const history = await (await fx.service()).history(parent);
    expect(history.points.reduce((sum, point) => sum + point.dead, 0)).toBe(2);
  });

  it("runs the parent anyway with onChildFailure 'continue', listing the failed child", async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const runs: Run[] = [];
    consumeAll(queue, [parent, child], runs, new Set(['bad']));
    await queue.pushFlow(parentOf(parent, 'p', child, ['good', 'bad'], [undefined, { onChildFailure: 'continue' }]));
    await eventually(() => runs.some(({ id }) => id === 'p'), 20_000);
    const run = runs.find(({ id }) => id === 'p')!;
    expect(run.results).toEqual({ [child]: { good: { from: 'good', payload: 1 } } });
    expect(run.failed).toEqual([
      { topic: child, id: 'bad', reason: 'failed', error: expect.stringContaining('refused by the test') as unknown },
    ]);
  });

  it('cancels the children that have not finished with their parent; a cancelled child fails its parent', async () => {
    const [parent, child, grandchild] = [uniqueTopic('parent'), uniqueTopic('child'), uniqueTopic('grand')];
    const queue = await fx.service();
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: 'p',
      children: [
        { topic: child, id: 'c1', payload: 1, children: [{ topic: grandchild, id: 'g1', payload: 1 }] },
        { topic: child, id: 'c2', payload: 2 },
      ],
    });
    expect(await queue.cancel(parent, 'p')).toBe('waiting-children');
    expect(await queue.get(child, 'c1')).toBeNull();
    expect(await queue.get(child, 'c2')).toBeNull();
    expect(await queue.get(grandchild, 'g1')).toBeNull();
    await expectNothingLeft([parent, child, grandchild]);

    await queue.pushFlow(parentOf(parent, 'q', child, ['d1', 'd2']));
    expect(await queue.cancel(child, 'd1')).toBe('ready');
    const dead = await untilDead(queue, parent, 'q');
    expect(dead.reason).toBe('child-failed');
    expect(await queue.getFlow(parent, 'q')).toMatchObject({
      children: expect.arrayContaining([
        expect.objectContaining({ id: 'd1', state: 'cancelled', failure: { reason: 'cancelled' } }),
        expect.objectContaining({ id: 'd2', state: 'ready' }),
      ]) as unknown,
    });
  });

  it('hands a result given to ack by hand to the parent', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow({ topic: parent, id: 'p', payload: 'p', children: [{ topic: child, id: 'c', payload: 1 }] });
    const [message] = await queue.reserve(child);
    expect(await queue.ack(message, { pages: 3 })).toBe(true);
    const runs: Run[] = [];
    consumeAll(queue, [parent], runs);
    await eventually(() => runs.length === 1);
    expect(runs[0].results).toEqual({ [child]: { c: { pages: 3 } } });
  });

  it('passes on a child end that no process passed (a last lease expired in Redis) through a consumer of the child topic', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: 'p',
      children: [{ topic: child, id: 'c', payload: 1, options: { maxAttempts: 1, onChildFailure: 'continue' } }],
    });
    // Leased by hand and never settled: as a consumer that died. Its last lease runs out, and the
    // next reserve (a consumer's) buries it in Redis, writing the outbox entry in the same step.
    await queue.reserve(child, { leaseMs: 50 });
    const runs: Run[] = [];
    consumeAll(queue, [parent, child], runs);
    await eventually(() => runs.some(({ id }) => id === 'p'), 30_000);
    expect(runs.map(({ id }) => id)).toEqual(['p']);
    expect(runs[0].failed).toEqual([
      { topic: child, id: 'c', reason: 'expired', error: 'the lease of the last attempt expired' },
    ]);
    expect(runs[0].results).toEqual({});
    await eventually(async () => (await fx.redis.hlen(`{ackq:${child}}:flow-outbox`)) === 0);
  });

  it("reports a parent the repair sweep sends to the dead letters in the sweeping consumer's process", async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const producer = await fx.service();
    await producer.pushFlow({
      topic: parent,
      id: 'p',
      payload: 'p',
      children: [{ topic: child, id: 'c', payload: 1, options: { maxAttempts: 1 } }],
    });
    // Its last lease runs out unsettled; a consumer's reserve buries it in Redis, and its sweep
    // passes the end on: the parent goes to the dead letters there.
    await producer.reserve(child, { leaseMs: 50 });
    const consumerSide = await fx.service();
    const dead: RedisAckQueueEvent[] = [];
    const subscription = consumerSide.events$.subscribe((event) => event.type === 'dead' && dead.push(event));
    consumeAll(consumerSide, [child], []);
    await eventually(() => dead.length === 1, 30_000);
    subscription.unsubscribe();
    expect(dead).toEqual([expect.objectContaining({ topic: parent, id: 'p', reason: 'child-failed', attempt: 0 })]);
    expect(dead[0].error?.message).toContain('(expired)');
  });

  it('a retried pushFlow with the same ids stores one flow', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const flow: Flow = {
      topic: parent,
      id: 'p',
      payload: 'p',
      children: [1, 2, 3].map((i) => ({ topic: child, id: `c${i}`, payload: i })),
    };
    await queue.pushFlow(flow);
    const again = await queue.pushFlow(flow);
    expect(again.duplicate).toBe(true);
    expect(again.children.every(({ duplicate }) => duplicate)).toBe(true);
    expect((await queue.stats(child)).ready).toBe(3);
    expect((await queue.stats(parent)).waitingChildren).toBe(1);
  });

  it('refuses a flow whose node id another message holds, and runs nothing of it', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.push(child, 'not in a flow', { id: 'taken' });
    const flow: Flow = {
      topic: parent,
      id: 'p',
      payload: 'p',
      children: [
        { topic: child, id: 'free', payload: 1 },
        { topic: child, id: 'taken', payload: 2 },
      ],
    };
    const refused = queue.pushFlow(flow);
    await expect(refused).rejects.toBeInstanceOf(FlowIdTakenError);
    await expect(refused).rejects.toMatchObject({ code: 'FLOW_ID_TAKEN', topic: child, id: 'taken' });
    expect(await queue.get(parent, 'p')).toBeNull();
    // The node stored before the refusal waits for a root that never comes: it never runs.
    expect(await queue.list(child, 'ready')).toEqual([expect.objectContaining({ id: 'taken' })]);
    expect((await queue.get(child, 'free'))?.dueAt).toBeUndefined();
  });

  it("passes on the ends acked together although one parent's key was overwritten by a foreign type", async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p1', child, ['c1']));
    await queue.pushFlow(parentOf(parent, 'p2', child, ['c2']));
    const damaged = Object.keys(await snapshotTopic(fx.redis, parent)).find((key) => key.endsWith(':flow:p1'))!;
    await fx.redis.del(damaged);
    await fx.redis.set(damaged, 'not a hash');
    // Both children end in one ack call, so their ends reach the parents' slot in one batch.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    queue.consume(
      child,
      async () => {
        if (++started === 2) release();
        await gate;
      },
      { concurrency: 2 },
    );
    const ran: string[] = [];
    queue.consume(parent, (_payload: unknown, context: MessageContext) => void ran.push(context.id));
    await eventually(() => ran.includes('p2'), 20_000);
    expect(ran).toEqual(['p2']);
  });

  it('refuses bad flows with typed errors and stores nothing', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const bad: unknown[] = [
      null,
      { topic: parent, payload: 1, children: 'x' },
      { topic: parent, payload: 1, children: [{ topic: child, payload: 1, options: { onChildFailure: 'maybe' } }] },
      { topic: parent, payload: 1, options: { onChildFailure: 'continue' }, children: [] },
      { topic: parent, payload: 1, extra: true },
      {
        topic: parent,
        payload: 1,
        children: [
          { topic: child, id: 'same', payload: 1 },
          { topic: child, id: 'same', payload: 2 },
        ],
      },
    ];
    for (const flow of bad) await expect(queue.pushFlow(flow as Flow)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(
      queue.pushFlow({ topic: parent, payload: 1, children: [{ topic: 'bad topic!', payload: 1 }] }),
    ).rejects.toBeInstanceOf(InvalidTopicError);
    for (const topic of [parent, child]) expect(await snapshotTopic(fx.redis, topic)).toEqual({});
  });
});
