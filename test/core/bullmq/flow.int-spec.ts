// Mirrors BullMQ's tests/flow.test.ts as scenarios of this queue's public API (`pushFlow`,
// `getFlow`, `childResults`, `failedChildren`, `cancel`, `requeueDead`). BullMQ's parent options
// (failParentOnFailure, continueParentOnFailure, ignore/removeDependencyOnFailure) are here one
// child option, `onChildFailure: 'fail' | 'continue'`, with `'fail'` the default; a child's result
// is kept with its parent whatever becomes of the child (no removeOnComplete to lose it).
import type { Flow, MessageContext, RedisAckQueueService } from '../../../lib';
import { expectLogs } from '../../support/capture-logs';
import { eventually, type TestClient, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { quietFor } from '../../support/waits';

/** What each handler saw, in the order they ran. */
interface Run {
  id: string;
  results: unknown;
  failed: unknown;
}

/** Consumes each topic: records the run, fails the ids in `fail`, returns `{ from: id }`. */
function consumeAll(queue: RedisAckQueueService, topics: string[], runs: Run[], fail = new Set<string>()) {
  return topics.map((topic) =>
    queue.consume(
      topic,
      (_payload: unknown, context: MessageContext) => {
        runs.push({ id: context.id, results: context.childResults(), failed: context.failedChildren() });
        if (fail.has(context.id)) throw new Error('refused by the test');
        return { from: context.id };
      },
      { maxAttempts: 1 },
    ),
  );
}

/** A parent `id` on `parent` with children `ids` on `child`, each with its `options`. */
function parentOf(parent: string, id: string, child: string, ids: string[], options: Flow['options'][] = []): Flow {
  return {
    topic: parent,
    id,
    payload: id,
    children: ids.map((childId, i) => ({ topic: child, id: childId, payload: childId, options: options[i] })),
  };
}

async function serverNow(redis: TestClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('BullMQ flow, as pushFlow trees', () => {
  const fx = useRedis();
  expectLogs(/went to the dead letters|refused by the test/);

  it('flow: "should process children before the parent" — and "keeps children results in parent" (removeOnComplete in children): the parent runs once, after every child, with each result', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['c1', 'c2', 'c3']));
    expect(await queue.get(parent, 'p')).toMatchObject({ state: 'waiting-children' });
    const runs: Run[] = [];
    const consumers = consumeAll(queue, [parent, child], runs);
    await eventually(() => runs.some(({ id }) => id === 'p'));
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(runs.map(({ id }) => id)).toHaveLength(4);
    expect(runs.at(-1)!.id).toBe('p');
    // The children were deleted when acked (this queue's default); their results stayed with the parent.
    expect(await queue.get(child, 'c1')).toBeNull();
    expect(runs.at(-1)!.results).toEqual({ [child]: { c1: { from: 'c1' }, c2: { from: 'c2' }, c3: { from: 'c3' } } });
  });

  it('flow: "should get a flow tree" — `getFlow` answers each node\'s state, and an ended child\'s result', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['c1', 'c2']));
    const [first] = await queue.reserve(child, { leaseMs: 60_000 });
    await queue.ack(first, { pages: 3 });
    expect(await queue.getFlow(parent, 'p')).toMatchObject({
      id: 'p',
      state: 'waiting-children',
      children: expect.arrayContaining([
        expect.objectContaining({ id: first.id, state: 'completed', result: { pages: 3 } }),
        expect.objectContaining({ id: first.id === 'c1' ? 'c2' : 'c1', state: 'ready' }),
      ]) as unknown,
    });
    expect(await queue.getFlow(parent, 'nothing')).toBeNull();
  });

  it('flow: "should not process parent if child fails" — the parent is dead as `child-failed` and never runs', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['good', 'bad']));
    const runs: Run[] = [];
    const consumers = consumeAll(queue, [parent, child], runs, new Set(['bad']));
    await eventually(async () => (await queue.get(parent, 'p'))?.state === 'dead');
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(await queue.get(parent, 'p')).toMatchObject({ reason: 'child-failed' });
    expect(runs.map(({ id }) => id)).not.toContain('p');
  });

  it('flow: "should start processing parent after a child fails" (continueParentOnFailure) — `onChildFailure: \'continue\'` runs it, listing the failed child', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['good', 'bad'], [undefined, { onChildFailure: 'continue' }]));
    const runs: Run[] = [];
    const consumers = consumeAll(queue, [parent, child], runs, new Set(['bad']));
    await eventually(() => runs.some(({ id }) => id === 'p'));
    await Promise.all(consumers.map((consumer) => consumer.close()));
    const run = runs.find(({ id }) => id === 'p')!;
    expect(run.results).toEqual({ [child]: { good: { from: 'good' } } });
    expect(run.failed).toEqual([expect.objectContaining({ topic: child, id: 'bad', reason: 'failed' })]);
  });

  it('flow: "should update parent dependencies reference" (when retrying a failed child) — `requeueDead` of the child brings its dead parent back', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['c'], [{ maxAttempts: 1 }]));
    const [only] = await queue.reserve(child);
    expect(await queue.nack(only, { error: new Error('refused by the test') })).toBe('dead');
    await eventually(async () => (await queue.get(parent, 'p'))?.state === 'dead');
    expect(await queue.requeueDead(child, ['c'])).toBe(1);
    const runs: Run[] = [];
    const consumers = consumeAll(queue, [parent, child], runs);
    await eventually(() => runs.some(({ id }) => id === 'p'));
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(runs.map(({ id }) => id)).toEqual(['c', 'p']);
  });

  it('flow: "moves process to delayed after children are processed" (parent has delay) — its delay counts from the last child\'s ack, on the server clock', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow({ ...parentOf(parent, 'p', child, ['c']), options: { delayMs: 300 } });
    const [message] = await queue.reserve(child);
    const ackedBy = await serverNow(fx.redis);
    await queue.ack(message);
    const waiting = (await queue.get(parent, 'p'))!;
    expect(waiting.state).toBe('delayed');
    expect(waiting.dueAt).toBeGreaterThanOrEqual(ackedBy + 300);
  });

  it('flow: "moves children to delayed" (when children have delay) — a child with `delayMs` waits; its parent waits for it', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['now', 'later'], [undefined, { delayMs: 60_000 }]));
    expect(await queue.get(child, 'later')).toMatchObject({ state: 'delayed' });
    expect(await queue.get(child, 'now')).toMatchObject({ state: 'ready' });
    expect((await queue.stats(parent)).waitingChildren).toBe(1);
  });

  it('flow: "should not process parent until queue is unpaused" — the children run; the parent waits ready on its paused topic', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pause(parent);
    await queue.pushFlow(parentOf(parent, 'p', child, ['c1', 'c2']));
    const runs: Run[] = [];
    const consumers = consumeAll(queue, [parent, child], runs);
    await eventually(async () => (await queue.get(parent, 'p'))?.state === 'ready');
    await quietFor(200, 'the parent running while paused');
    expect(runs.map(({ id }) => id).sort()).toEqual(['c1', 'c2']);
    await queue.resume(parent);
    await eventually(() => runs.length === 3);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(runs.at(-1)!.id).toBe('p');
  });

  it('flow: "should remove all children when removing a parent" (.remove) — `cancel` of a parent cancels its children that had not ended', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow(parentOf(parent, 'p', child, ['c1', 'c2']));
    expect(await queue.cancel(parent, 'p')).toBe('waiting-children');
    expect(await queue.get(child, 'c1')).toBeNull();
    expect(await queue.get(child, 'c2')).toBeNull();
    expect(await queue.stats(child)).toMatchObject({ ready: 0 });
  });

  it('flow: "should process parent when children is an empty array" — ready at once', async () => {
    const parent = uniqueTopic('parent');
    const queue = await fx.service();
    const tree = await queue.pushFlow({ topic: parent, id: 'p', payload: 'p', children: [] });
    expect(tree).toEqual({ topic: parent, id: 'p', duplicate: false, children: [] });
    expect(await queue.get(parent, 'p')).toMatchObject({ state: 'ready' });
  });

  it('flow: "should allow passing custom jobId in options" — ids given to every node; a second pushFlow with them stores nothing and says `duplicate`', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const flow = parentOf(parent, 'order-7', child, ['order-7-a']);
    expect(await queue.pushFlow(flow)).toMatchObject({ id: 'order-7', duplicate: false });
    expect(await queue.pushFlow(flow)).toEqual({
      topic: parent,
      id: 'order-7',
      duplicate: true,
      children: [{ topic: child, id: 'order-7-a', duplicate: true, children: [] }],
    });
    expect(await queue.stats(child)).toMatchObject({ ready: 1 });
  });
});
