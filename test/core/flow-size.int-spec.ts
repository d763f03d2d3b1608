import { FlowIdTakenError, type Flow, type FlowNode } from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** Nodes of a tree, counted without recursion. */
function countNodes(root: FlowNode): number {
  let count = 0;
  for (const stack = [root]; stack.length > 0; count++) stack.push(...stack.pop()!.children);
  return count;
}

/** A root, `parents` children, each with `leaves` children of its own. */
function twoLevels(top: string, middle: string, leaf: string, parents: number, leaves: number): Flow {
  return {
    topic: top,
    id: 'root',
    payload: 0,
    children: Array.from({ length: parents }, (_, p) => ({
      topic: middle,
      id: `m${p}`,
      payload: p,
      children: Array.from({ length: leaves }, (_, l) => ({ topic: leaf, id: `m${p}-l${l}`, payload: l })),
    })),
  };
}

describe('flows at size', () => {
  const fx = useRedis();

  it('reads a 10,000-node flow in pages, each bounded by commandTimeoutMs, not the whole read by one', async () => {
    const [top, middle, leaf] = [uniqueTopic('top'), uniqueTopic('middle'), uniqueTopic('leaf')];
    // Storing 10,000 nodes is not what is measured here: a bound no machine reaches.
    const writer = await fx.service({ commandTimeoutMs: 120_000 });
    await writer.pushFlow(twoLevels(top, middle, leaf, 99, 100));
    // A page's worth (a parent and 500 children, as one page of the read looks up), timed on this
    // machine now, its slowest of three: a bound four times that holds each page of the big read,
    // while the whole read (twenty pages and more) takes well over it.
    const [pageTop, pageLeaf] = [uniqueTopic('page-top'), uniqueTopic('page-leaf')];
    const children = Array.from({ length: 500 }, (_, i) => ({ topic: pageLeaf, id: `c${i}`, payload: i }));
    await writer.pushFlow({ topic: pageTop, id: 'p', payload: 0, children });
    let pageMs = 0;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      expect(countNodes((await writer.getFlow(pageTop, 'p'))!)).toBe(501);
      pageMs = Math.max(pageMs, performance.now() - started);
    }
    const reader = await fx.service({ commandTimeoutMs: Math.ceil(4 * pageMs) });

    const started = performance.now();
    const flow = (await reader.getFlow(top, 'root'))!;
    const wholeMs = performance.now() - started;
    expect(countNodes(flow)).toBe(10_000);
    expect(flow.state).toBe('waiting-children');
    expect(flow.children.map(({ id }) => id)).toEqual(Array.from({ length: 99 }, (_, p) => `m${p}`));
    expect(flow.children[98].children.map(({ id, state }) => [id, state])).toEqual(
      Array.from({ length: 100 }, (_, l) => [`m98-l${l}`, 'ready']),
    );
    console.log(
      `a flow of 10,000 nodes read in ${Math.round(wholeMs)} ms; a page bound of ${Math.ceil(4 * pageMs)} ms`,
    );
  });

  it('refuses a pushFlow whose root id another message or flow holds, storing none of its children', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.push(parent, 'plain', { id: 'plain' });
    const onPlain = queue.pushFlow({
      topic: parent,
      id: 'plain',
      payload: 0,
      children: [{ topic: child, id: 'a', payload: 1 }],
    });
    await expect(onPlain).rejects.toBeInstanceOf(FlowIdTakenError);
    await expect(onPlain).rejects.toMatchObject({ code: 'FLOW_ID_TAKEN', topic: parent, id: 'plain' });

    const flow: Flow = {
      topic: parent,
      id: 'p',
      payload: 0,
      children: [
        { topic: child, id: 'c1', payload: 1, children: [{ topic: child, id: 'g1', payload: 1 }] },
        { topic: child, id: 'c2', payload: 2 },
      ],
    };
    await queue.pushFlow(flow);
    // Other children under the same root, or under one of its parents: another flow.
    const otherChild = { ...flow, children: [flow.children![0], { topic: child, id: 'c3', payload: 3 }] };
    await expect(queue.pushFlow(otherChild)).rejects.toMatchObject({ code: 'FLOW_ID_TAKEN', topic: parent, id: 'p' });
    const otherGrandchild = {
      ...flow,
      children: [{ ...flow.children![0], children: [{ topic: child, id: 'g2', payload: 2 }] }, flow.children![1]],
    };
    await expect(queue.pushFlow(otherGrandchild)).rejects.toMatchObject({ topic: child, id: 'c1' });
    for (const id of ['a', 'c3', 'g2']) expect(await queue.get(child, id)).toBeNull();

    // The same flow again: every node existed, and says so.
    const again = await queue.pushFlow(flow);
    expect([again.duplicate, ...again.children.map(({ duplicate }) => duplicate)]).toEqual([true, true, true]);
    expect(again.children[0].children[0]).toMatchObject({ id: 'g1', duplicate: true });
  });
});
