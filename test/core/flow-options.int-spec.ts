import type { BatchMessage, MessageContext, RedisAckQueueService } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Push options on flow nodes, partitioned topics, kept completed records and batch handlers. */
describe('flows: node options and topic layouts', () => {
  const fx = useRedis();

  function recordRuns(
    queue: RedisAckQueueService,
    topic: string,
    runs: { id: string; at: number; results: unknown }[],
  ) {
    queue.consume(topic, (_payload: unknown, context: MessageContext) => {
      runs.push({ id: context.id, at: Date.now(), results: context.childResults() });
      return context.id;
    });
  }

  it('gives a delayed child its delay from when the flow is stored, and a parent its own from its last child', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const runs: { id: string; at: number; results: unknown }[] = [];
    recordRuns(queue, parent, runs);
    recordRuns(queue, child, runs);
    const pushedAt = Date.now();
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: 0,
      options: { delayMs: 400 },
      children: [
        { topic: child, id: 'now', payload: 1 },
        { topic: child, id: 'later', payload: 2, options: { delayMs: 300 } },
      ],
    });
    expect(await queue.get(child, 'later')).toMatchObject({ state: 'delayed' });
    await eventually(() => runs.some(({ id }) => id === 'p'), 20_000);
    const at = Object.fromEntries(runs.map(({ id, at: time }) => [id, time]));
    // Server clock against this one: a few ms of skew at most on one machine.
    expect(at.later - pushedAt).toBeGreaterThanOrEqual(290);
    expect(at.p - at.later).toBeGreaterThanOrEqual(390);
    expect(runs.find(({ id }) => id === 'p')!.results).toEqual({ [child]: { now: 'now', later: 'later' } });
  });

  it('keeps priorities and groups of flow nodes', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: 0,
      children: [
        { topic: child, id: 'low', payload: 1 },
        { topic: child, id: 'high', payload: 2, options: { priority: 9 } },
        { topic: child, id: 'g1', payload: 3, options: { group: 'tenant-a' } },
        { topic: child, id: 'g2', payload: 4, options: { group: 'tenant-a' } },
      ],
    });
    expect(await queue.get(child, 'high')).toMatchObject({ priority: 9 });
    const order: string[] = [];
    const runs: { id: string; at: number; results: unknown }[] = [];
    recordRuns(queue, parent, runs);
    queue.consume(
      child,
      (_payload: unknown, context: MessageContext) => {
        order.push(context.id);
        return context.group ?? context.id;
      },
      { concurrency: 1 },
    );
    await eventually(() => runs.length === 1, 20_000);
    // Priorities order the plain messages (groups take their own turns).
    expect(order.indexOf('high')).toBeLessThan(order.indexOf('low'));
    expect(order.indexOf('g1')).toBeLessThan(order.indexOf('g2'));
    expect(runs[0].results).toEqual({ [child]: { low: 'low', high: 'high', g1: 'tenant-a', g2: 'tenant-a' } });
  });

  it('runs flows whose children and parents live on partitioned topics', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const options = { topics: { [parent]: { partitions: 3 }, [child]: { partitions: 4 } } };
    const queue = await fx.service(options);
    const runs: { id: string; at: number; results: unknown }[] = [];
    recordRuns(queue, parent, runs);
    recordRuns(queue, child, runs);
    for (let f = 0; f < 6; f++) {
      await queue.pushFlow({
        topic: parent,
        id: `p${f}`,
        payload: f,
        children: Array.from({ length: 5 }, (_, c) => ({ topic: child, id: `p${f}-c${c}`, payload: c })),
      });
    }
    await eventually(() => runs.filter(({ id }) => id.startsWith('p') && !id.includes('-')).length === 6, 20_000);
    for (let f = 0; f < 6; f++) {
      const run = runs.find(({ id }) => id === `p${f}`)!;
      expect(run.results).toEqual({
        [child]: Object.fromEntries(Array.from({ length: 5 }, (_, c) => [`p${f}-c${c}`, `p${f}-c${c}`])),
      });
    }
    expect((await queue.stats(parent)).waitingChildren).toBeUndefined();
  });

  it('hands each child result to its parent from a batch handler, and keeps completed records where asked', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service({ topics: { [child]: { keepCompleted: true } } });
    const runs: { id: string; at: number; results: unknown }[] = [];
    recordRuns(queue, parent, runs);
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: 0,
      children: [1, 2, 3].map((i) => ({ topic: child, id: `c${i}`, payload: i })),
    });
    queue.consume(
      child,
      async (messages: BatchMessage<number>[]) => {
        await Promise.resolve();
        return messages.map(({ payload }) => payload * 10);
      },
      { batch: { maxSize: 3, maxWaitMs: 200 } },
    );
    await eventually(() => runs.length === 1, 20_000);
    // A batch handler's return value is no per-message result: each child gives none.
    expect(runs[0].results).toEqual({ [child]: { c1: undefined, c2: undefined, c3: undefined } });
    expect(await queue.get(child, 'c1')).toMatchObject({ state: 'completed' });
  });
});
