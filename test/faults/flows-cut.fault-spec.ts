import type { Flow } from '../../lib';
import { ConsumerProcesses } from '../support/consumer-processes';
import { leftovers, NOTHING_LEFT } from '../support/fault-ledger';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';

interface FlowTopics {
  parent: string;
  middle: string;
  child: string;
}

const IDS = { parent: ['p'], middle: ['m'], child: ['c-0', 'c-1', 'g-0', 'g-1'] };

/**
 * A parent on P with two leaves on C and a middle node on M with two leaves of its own. `mark`
 * puts a marker in the root's payload or in leaf c-1's: the command that stores it is the one
 * whose reply the proxy drops, before the connection is cut for good.
 */
function flowOf(t: FlowTopics, mark: { root?: string; leaf?: string } = {}): Flow {
  const leaf = (id: string, marker?: string): Flow => ({
    topic: t.child,
    id,
    payload: { result: `${id}!`, ...(marker && { mark: marker }) },
  });
  return {
    topic: t.parent,
    id: 'p',
    payload: { reportChildren: true, ...(mark.root && { mark: mark.root }) },
    children: [
      leaf('c-0'),
      leaf('c-1', mark.leaf),
      {
        topic: t.middle,
        id: 'm',
        payload: { result: 'm!', reportChildren: true },
        children: [leaf('g-0'), leaf('g-1')],
      },
    ],
  };
}

function newTopics(): FlowTopics {
  return { parent: uniqueTopic('cut-parent'), middle: uniqueTopic('cut-middle'), child: uniqueTopic('cut-child') };
}

/** Whether a message with this id is stored (held nodes included). */
async function stored(redis: ReturnType<typeof useRedis>['redis'], topic: string, id: string): Promise<boolean> {
  return (await redis.hexists(`{ackq:${topic}}:messages`, id)) === 1;
}

describe('fault: a pushFlow cut off mid-way, then retried', () => {
  const fx = useRedis();

  /**
   * pushFlow on a connection that loses the reply to the command carrying `marker` and never
   * reaches Redis again (as a process that died right after it): the call fails, and what was
   * stored before the cut stays.
   */
  async function cutPushFlow(flow: Flow, marker: string): Promise<void> {
    const proxy = await ReplyDroppingProxy.start(fx.server.port);
    try {
      const cut = await fx.service({ connection: proxy.url, commandTimeoutMs: 1_000 });
      proxy.dropReplyTo(marker, { thenCutOff: true });
      await expect(cut.pushFlow(flow)).rejects.toThrow();
      expect(proxy.dropped).toBe(1);
      await proxy.close();
      await cut.close(0);
    } finally {
      await proxy.close();
    }
  }

  /** The flow of `t` ran once: each node once, each parent with every child's result. */
  function expectOneRun(processes: ConsumerProcesses, t: FlowTopics): void {
    const runs = (topic: string) => processes.of('start').filter((e) => e.topic === topic);
    for (const topic of ['parent', 'middle', 'child'] as const) {
      expect(
        runs(t[topic])
          .map((e) => e.id)
          .sort(),
      ).toEqual(IDS[topic]);
    }
    const result = (id: string) => ({ value: `${id}!`, pid: expect.any(Number) as unknown, attempt: 1 });
    expect(runs(t.middle)[0].children).toEqual({ [t.child]: { 'g-0': result('g-0'), 'g-1': result('g-1') } });
    expect(runs(t.parent)[0].children).toEqual({
      [t.child]: { 'c-0': result('c-0'), 'c-1': result('c-1') },
      [t.middle]: { m: result('m') },
    });
  }

  /** Every message of the flow gone, and every flow key but the counters (a sweep may still be passing ends). */
  async function expectNothingLeft(t: FlowTopics): Promise<void> {
    const flowKeys = async (topic: string) => {
      const tag = `{ackq:${topic}}`;
      return Object.keys(await snapshotTopic(fx.redis, topic)).filter((key) =>
        /^:flow(?!-sequence$)/.test(key.slice(tag.length)),
      );
    };
    const topics = [t.parent, t.middle, t.child];
    let left: string[] = [];
    await eventually(
      async () => {
        left = (await Promise.all(topics.map(flowKeys))).flat();
        const messages = await Promise.all(topics.map((topic) => fx.redis.hlen(`{ackq:${topic}}:messages`)));
        return left.length === 0 && messages.every((n) => n === 0);
      },
      30_000,
      100,
    ).catch(() => undefined);
    expect(left).toEqual([]);
    for (const topic of topics) expect(await leftovers(fx.redis, topic)).toEqual(NOTHING_LEFT);
  }

  function consumersOf(...flows: FlowTopics[]): ConsumerProcesses {
    const topics = flows.flatMap((t) => [t.parent, t.middle, t.child]);
    return new ConsumerProcesses({ ...fx.consumerEnv, TOPICS: topics.join(','), LEASE_MS: '5000', HANDLER_MS: '10' });
  }

  it('cut before its root was stored: nothing of it runs, sweeps included, until the retry with the same ids stores one flow; cut after its root was stored: the sweeper commits it', async () => {
    const [early, late] = [newTopics(), newTopics()];
    const queue = await fx.service();
    const processes = consumersOf(early, late);
    try {
      await processes.start();
      // early: cut once the push of its leaves ran (the reply lost), before its root.
      const leafMark = `leaf-${Date.now()}`;
      await cutPushFlow(flowOf(early, { leaf: leafMark }), leafMark);
      expect(await stored(fx.redis, early.child, 'c-1')).toBe(true);
      expect(await stored(fx.redis, early.parent, 'p')).toBe(false);
      // late: cut once its root's push ran, before the commit that makes its leaves due.
      const rootMark = `root-${Date.now()}`;
      await cutPushFlow(flowOf(late, { root: rootMark }), rootMark);
      expect((await queue.get(late.parent, 'p'))?.state).toBe('waiting-children');
      for (const id of IDS.child) expect(await stored(fx.redis, late.child, id)).toBe(true);

      // Nobody retries late: the consumers' sweeper commits it (its root exists), and it runs.
      await processes.waitFor((e) => e.type === 'start' && e.topic === late.parent, 60_000, "late's parent run");
      await expectNothingLeft(late);
      expectOneRun(processes, late);
      // early's nodes waited as long, through the same sweeps: without its root, none ran.
      const earlyTopics = new Set([early.parent, early.middle, early.child]);
      expect(processes.of('start').filter((e) => earlyTopics.has(e.topic!))).toEqual([]);

      // The retry, same ids, on a good connection: what the cut stored is not stored again.
      const tree = await queue.pushFlow(flowOf(early, { leaf: leafMark }));
      expect(tree.duplicate).toBe(false);
      expect(tree.children.find((c) => c.id === 'c-1')?.duplicate).toBe(true);
      await processes.waitFor((e) => e.type === 'start' && e.topic === early.parent, 30_000, "early's parent run");
      await expectNothingLeft(early);
      expectOneRun(processes, early);
    } finally {
      await processes.stopAll();
    }
  }, 120_000);

  it('cut after its root was stored, retried with the same ids: the retry commits the same flow, which runs once', async () => {
    const t = newTopics();
    const queue = await fx.service();
    // No consumer yet, so no sweeper: only the retry can commit the flow.
    const processes = consumersOf(t);
    try {
      const rootMark = `root-${Date.now()}`;
      await cutPushFlow(flowOf(t, { root: rootMark }), rootMark);
      expect((await queue.get(t.parent, 'p'))?.state).toBe('waiting-children');
      expect((await queue.get(t.child, 'c-0'))?.state).toBe('delayed');

      const tree = await queue.pushFlow(flowOf(t, { root: rootMark }));
      const flags: boolean[] = [];
      const visit = (node: typeof tree) => {
        flags.push(node.duplicate);
        node.children.forEach(visit);
      };
      visit(tree);
      expect(flags).toEqual([true, true, true, true, true, true]);
      // Committed by the retry: the leaves are due, the middle node and the parent wait for them.
      for (const id of ['c-0', 'c-1', 'g-0', 'g-1']) expect((await queue.get(t.child, id))?.state).toBe('ready');
      expect((await queue.get(t.middle, 'm'))?.state).toBe('waiting-children');

      await processes.start();
      await processes.waitFor((e) => e.type === 'start' && e.topic === t.parent, 30_000, "the parent's run");
      await expectNothingLeft(t);
      expectOneRun(processes, t);
    } finally {
      await processes.stopAll();
    }
  }, 60_000);

  it('cut before its root was stored and never retried: an hour on, the sweeper drops what it stored, and nothing of it is left', async () => {
    const t = newTopics();
    const processes = consumersOf(t);
    try {
      const leafMark = `leaf-${Date.now()}`;
      await cutPushFlow(flowOf(t, { leaf: leafMark }), leafMark);
      expect(await stored(fx.redis, t.child, 'c-1')).toBe(true);
      // An hour passes for the nodes it stored (their time stored moved back, on the server's clock).
      const [seconds] = await fx.redis.time();
      const hourAgo = (Number(seconds) - 3_660) * 1_000;
      for (const topic of [t.middle, t.child]) {
        for (const id of [...IDS.middle, ...IDS.child]) {
          await fx.redis.zadd(`{ackq:${topic}}:flow-uncommitted`, 'XX', hourAgo, id);
        }
      }
      await processes.start();
      await expectNothingLeft(t);
      expect(processes.of('start')).toEqual([]);
    } finally {
      await processes.stopAll();
    }
  }, 60_000);
});
