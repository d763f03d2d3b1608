import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';

/**
 * 1,000 topics, 100,000 dead letters and a flow of 1,000 children stay usable: every request
 * reads one page, the last page is as right as the first, one dead letter is found by id, and a
 * parent answers a part of its children and tree with the rest counted. (Speed is the benchmarks'
 * job: the times are printed, not asserted.)
 */
describe('dashboard at scale', () => {
  const fx = useRedis();
  let served: DashboardApp;
  const prefix = uniqueTopic('p');
  beforeAll(async () => {
    served = await startDashboardApp(
      'express',
      fx.connection,
      prefix,
      {},
      {
        deadLetters: { maxCount: 200_000 },
      },
    );
  });
  afterAll(() => served?.close());

  async function read<T>(path: string): Promise<{ body: T; ms: number }> {
    const started = performance.now();
    const response = await fetch(`${served.url}/api${path}`, { headers: { authorization: OPERATOR } });
    expect(response.status).toBe(200);
    return { body: (await response.json()) as T, ms: Math.round(performance.now() - started) };
  }

  it('pages and searches 1,000 topics', async () => {
    const names = Array.from({ length: 1_000 }, (_, i) => `t.${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 100) {
      await Promise.all(names.slice(i, i + 100).map((topic) => served.queue.push(topic, i)));
    }
    type Page = { total: number; rows: { topic: string; ready: number }[] };
    const first = await read<Page>('/topics');
    expect(first.body.total).toBe(1_000);
    expect(first.body.rows).toHaveLength(50);
    const last = await read<Page>('/topics?offset=950&limit=50');
    expect(last.body.rows.map((row) => row.topic)).toEqual(names.slice(950));
    expect(last.body.rows.every((row) => row.ready === 1)).toBe(true);
    const found = await read<Page>('/topics?search=t.077');
    expect(found.body.rows.map((row) => row.topic)).toEqual(names.slice(770, 780));
    console.log(`1,000 topics: first page ${first.ms} ms, last page ${last.ms} ms, search ${found.ms} ms`);
  });

  it('answers a parent of 1,000 children with 100 of them and 200 nodes of its tree, the rest counted', async () => {
    const children = Array.from({ length: 1_000 }, (_, i) => ({ topic: 'parts', id: `part-${i}`, payload: i }));
    await served.queue.pushFlow({ topic: 'assembly', id: 'big', payload: 'all', children });
    type Detail = { childCounts: Record<string, number>; children: { id: string }[] };
    const detail = await read<Detail>('/message?topic=assembly&id=big');
    expect(detail.body.childCounts).toEqual({ total: 1_000, pending: 1_000, acked: 0, failed: 0 });
    expect(detail.body.children).toHaveLength(100);
    type View = { id: string; more: number; children: View[] };
    const flow = await read<{ total: number; shown: number; states: object; root: View }>(
      '/flow?topic=assembly&id=big',
    );
    expect(flow.body).toMatchObject({ total: 1_001, shown: 200, states: { 'waiting-children': 1, ready: 1_000 } });
    expect([flow.body.root.children.length, flow.body.root.more]).toEqual([199, 801]);
    const all = await read<{ shown: number; root: View }>('/flow?topic=assembly&id=big&limit=2000');
    expect([all.body.shown, all.body.root.children.length, all.body.root.more]).toEqual([1_001, 1_000, 0]);
    console.log(`a flow of 1,000 children: details ${detail.ms} ms, tree ${flow.ms} ms, whole tree ${all.ms} ms`);
  });

  it('answers a flow of 10,000 nodes, its read bounded page by page', async () => {
    // Storing 10,000 nodes is not what is tried here: a bound no machine reaches.
    const writer = await fx.service({ prefix, commandTimeoutMs: 120_000 });
    await writer.pushFlow({
      topic: 'book',
      id: 'huge',
      payload: 0,
      children: Array.from({ length: 99 }, (_, p) => ({
        topic: 'chapter',
        id: `c${p}`,
        payload: p,
        children: Array.from({ length: 100 }, (_, l) => ({ topic: 'page', id: `c${p}-p${l}`, payload: l })),
      })),
    });
    const flow = await read<{ total: number; shown: number; states: object }>('/flow?topic=book&id=huge');
    expect(flow.body).toMatchObject({ total: 10_000, shown: 200, states: { 'waiting-children': 100, ready: 9_900 } });
    console.log(`a flow of 10,000 nodes: tree ${flow.ms} ms`);
  });

  it('pages 100,000 dead letters and finds one by id', async () => {
    const { queue } = served;
    const topic = 'bulk';
    const total = 100_000;
    for (let i = 0; i < total; i += 1_000) {
      const items = Array.from({ length: 1_000 }, (_, k) => ({
        payload: { n: i + k },
        id: `d${i + k}`,
        maxAttempts: 1,
      }));
      await queue.pushMany(topic, items);
    }
    // Leases of 10 ms on one attempt: each later reserve buries the expired ones as dead letters.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 11));
    while ((await queue.stats(topic)).ready > 0) await queue.reserve(topic, { count: 1_000, leaseMs: 10 });
    while ((await queue.stats(topic)).dead < total) await pause().then(() => queue.reserve(topic, { leaseMs: 10 }));
    type Info = { id: string; state: string; reason?: string };
    const first = await read<Info[]>(`/messages?topic=${topic}&state=dead&limit=50`);
    expect(first.body).toHaveLength(50);
    const last = await read<Info[]>(`/messages?topic=${topic}&state=dead&offset=${total - 50}&limit=50`);
    expect(last.body).toHaveLength(50);
    expect(new Set([...first.body, ...last.body].map((m) => m.id)).size).toBe(100);
    const one = await read<Info>(`/message?topic=${topic}&id=d54321`);
    expect(one.body).toMatchObject({ id: 'd54321', state: 'dead', reason: 'expired' });
    const detail = await read<{ gauges: { dead: number } }>(`/topic?topic=${topic}`);
    expect(detail.body.gauges.dead).toBe(total);
    console.log(`100,000 dead letters: first page ${first.ms} ms, last page ${last.ms} ms, by id ${one.ms} ms`);
  }, 120_000);
});
