import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  getQueueToken,
  InvalidOptionError,
  RedisAckQueueDashboardModule,
  RedisAckQueueModule,
  type RedisAckQueueService,
  type TopicHistory,
} from '../../lib';
import type { Redis } from 'ioredis';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp, type Platform } from './dashboard-app';
import { StoredValues } from './stored-values';
import { OBJECT_NAMES, runNamedFlow } from '../support/named-flow';

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The dashboard over HTTP, on both adapters: guard, assets, JSON API, actions and their CSRF checks. */
describe.each<Platform>(['express', 'fastify'])('dashboard over HTTP (%s)', (platform) => {
  const fx = useRedis();
  let served: DashboardApp;
  let prefix: string;
  beforeEach(async () => {
    prefix = uniqueTopic('p');
    served = await startDashboardApp(platform, fx.connection, prefix);
  });
  afterEach(() => served.close());

  const auth = { authorization: OPERATOR };
  const get = (path: string, headers: Record<string, string> = auth) => fetch(`${served.url}${path}`, { headers });
  const json = async (path: string) => {
    const response = await get(path);
    expect(response.status).toBe(200);
    return response.json() as Promise<Record<string, unknown> & { rows: { topic: string }[] }>;
  };

  /** The page's cookie and token, as a browser holding the page has them. */
  async function session(): Promise<{ cookie: string; token: string }> {
    const page = await get('');
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    const token = /data-csrf="([^"]+)"/.exec(await page.text())![1];
    return { cookie, token };
  }

  async function post(path: string, body: unknown, headers: Record<string, string>) {
    return fetch(`${served.url}/api${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  }

  it('serves nothing, page, assets or API, to a request its guard refuses', async () => {
    for (const path of ['', '/assets/app.js', '/api/topics', '/api/flow?topic=t&id=a']) {
      expect((await get(path, {})).status).toBe(403);
      expect((await get(path, { authorization: 'Bearer wrong' })).status).toBe(403);
    }
    const refused = await post('/pause?topic=t', {}, { authorization: 'Bearer wrong' });
    expect(refused.status).toBe(403);
    expect(await served.queue.stats('t')).toMatchObject({ paused: false });
  });

  it('serves the page with its token, a strict content policy and only the shipped assets', async () => {
    const page = await get('');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('set-cookie')).toMatch(
      /^ackq_dashboard_csrf=[\w-]{32}; Path=\/queues; SameSite=Strict; HttpOnly/,
    );
    const html = await page.text();
    expect(html).toContain('src="/queues/assets/app.js"');
    const script = await get('/assets/app.js');
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain('hashchange');
    expect((await get('/assets/app.css')).headers.get('content-type')).toMatch(/^text\/css/);
    for (const path of ['/assets/missing.js', '/assets/..%2Fdashboard-page.js', '/assets/index.html']) {
      expect((await get(path)).status).toBe(404);
    }
  });

  it('lists topics with their counts, paged and searched by name', async () => {
    const { queue } = served;
    const topics = ['orders.a', 'orders.b', 'mail.c'];
    for (const topic of topics) await queue.push(topic, { n: 1 });
    await queue.push('orders.a', 'x', { delayMs: 60_000 });
    const all = await json('/api/topics');
    expect(all.total).toBe(3);
    expect(all.rows.map((row) => row.topic)).toEqual(['mail.c', 'orders.a', 'orders.b']);
    expect(all.rows[1]).toMatchObject({ ready: 1, delayed: 1, leased: 0, dead: 0, paused: false });
    const page = await json('/api/topics?search=orders&offset=1&limit=1');
    expect(page).toMatchObject({ total: 2, offset: 1, limit: 1, rows: [{ topic: 'orders.b' }] });
    for (const bad of ['limit=0', 'limit=501', 'offset=-1', 'limit=x']) {
      const response = await get(`/api/topics?${bad}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'BAD_REQUEST' });
    }
  });

  it('shows messages by state, one message, dead letters with reason and error', async () => {
    const { queue } = served;
    const topic = 'orders';
    await queue.push(topic, { order: 1 }, { id: 'o1', maxAttempts: 1, headers: { source: 'web' } });
    await queue.push(topic, { order: 2 }, { id: 'o2', maxAttempts: 1 });
    const [first] = await queue.reserve(topic);
    await queue.nack(first, { error: new Error('card declined') });
    const dead = (await json(`/api/messages?topic=${topic}&state=dead`)) as unknown as unknown[];
    expect(dead).toEqual([
      expect.objectContaining({
        id: 'o1',
        reason: 'failed',
        error: expect.stringContaining('card declined') as unknown,
      }),
    ]);
    const ready = (await json(`/api/messages?topic=${topic}&state=ready`)) as unknown as unknown[];
    expect(ready).toEqual([expect.objectContaining({ id: 'o2', state: 'ready' })]);
    expect(await json(`/api/message?topic=${topic}&id=o1`)).toMatchObject({
      payload: { order: 1 },
      headers: { source: 'web' },
    });
    // A keyed message's key and mode, in its row and its details.
    const keyed = await queue.push(topic, { order: 3 }, { debounce: { key: 'order-3', delayMs: 600_000 } });
    expect(await json(`/api/messages?topic=${topic}&state=delayed`)).toEqual([
      expect.objectContaining({ id: keyed.id, key: 'order-3', mode: 'debounce' }),
    ]);
    expect(await json(`/api/message?topic=${topic}&id=${keyed.id}`)).toMatchObject({
      key: 'order-3',
      mode: 'debounce',
    });
    expect((await get(`/api/message?topic=${topic}&id=none`)).status).toBe(404);
    expect((await get(`/api/messages?topic=${topic}&state=lost`)).status).toBe(400);
    expect((await get(`/api/topic?topic=${encodeURIComponent('bad topic')}`)).status).toBe(400);
    expect(await json(`/api/topic?topic=${topic}`)).toMatchObject({ gauges: { ready: 1, dead: 1 }, schedules: [] });
  });

  it("filters a topic's messages by tag, counts them, and shows each row's tags", async () => {
    const { queue } = served;
    const topic = 'tenants';
    await queue.push(topic, 1, { id: 't1', tags: ['tenant:42', 'spring'] });
    await queue.push(topic, 2, { id: 't2', tags: ['tenant:7'] });
    await queue.push(topic, 3, { id: 't3' });
    const tag = encodeURIComponent('tenant:42');
    expect(await json(`/api/messages?topic=${topic}&state=ready&tag=${tag}`)).toEqual([
      expect.objectContaining({ id: 't1', tags: ['tenant:42', 'spring'] }),
    ]);
    expect(await json(`/api/count?topic=${topic}&state=ready&tag=${tag}`)).toEqual({ count: 1 });
    expect(await json(`/api/count?topic=${topic}&state=ready`)).toEqual({ count: 3 });
    const all = (await json(`/api/messages?topic=${topic}&state=ready`)) as unknown as {
      id: string;
      tags?: string[];
    }[];
    expect(all.map((m) => [m.id, m.tags])).toEqual([
      ['t1', ['tenant:42', 'spring']],
      ['t2', ['tenant:7']],
      ['t3', undefined],
    ]);
    expect(await json(`/api/message?topic=${topic}&id=t2`)).toMatchObject({ tags: ['tenant:7'] });
    // A tag the queue refuses: a 400 that does not quote it.
    const refused = await get(`/api/messages?topic=${topic}&state=ready&tag=${'secret-tag'.repeat(20)}`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).not.toContain('secret-tag');
    expect((await get(`/api/count?topic=${topic}&state=ready&tag=a&tag=b`)).status).toBe(400);
  });

  it("answers a flow: a parent's children with their outcomes, a child's parent, the tree with states", async () => {
    const { queue } = served;
    await queue.pushFlow({
      topic: 'book',
      id: 'b1',
      payload: { book: 1 },
      children: [
        { topic: 'chapter', id: 'c1', payload: 1 },
        { topic: 'chapter', id: 'c2', payload: 2, options: { onChildFailure: 'continue' } },
        // Waits for its own child, on a topic nobody consumes: b1 keeps waiting.
        { topic: 'chapter', id: 'c3', payload: 3, children: [{ topic: 'page', id: 'g1', payload: 1 }] },
      ],
    });
    queue.consume(
      'chapter',
      (_: unknown, context: { id: string }) => {
        if (context.id === 'c2') throw new Error('out of ink');
        return { pages: 3 };
      },
      { maxAttempts: 1 },
    );
    await eventually(async () => {
      const children = (await queue.get('book', 'b1'))?.children ?? [];
      return children.filter((child) => child.outcome !== 'pending').length === 2;
    }, 30_000);

    expect(await json('/api/message?topic=book&id=b1')).toMatchObject({
      state: 'waiting-children',
      childCounts: { total: 3, pending: 1, acked: 1, failed: 1 },
      // Failed first, then pending, then acked; a result travels as a preview.
      children: [
        {
          topic: 'chapter',
          id: 'c2',
          outcome: 'failed',
          failure: { reason: 'failed', error: expect.stringContaining('out of ink') as unknown },
        },
        { topic: 'chapter', id: 'c3', outcome: 'pending' },
        { topic: 'chapter', id: 'c1', outcome: 'acked', preview: { text: '{"pages":3}', truncated: false, bytes: 11 } },
      ],
    });
    const parent = (await json('/api/message?topic=book&id=b1')) as unknown as { children: object[] };
    expect(parent.children.some((child) => 'result' in child)).toBe(false);
    expect(await json('/api/message?topic=chapter&id=c3')).toMatchObject({
      state: 'waiting-children',
      parent: { topic: 'book', id: 'b1' },
      childCounts: { total: 1, pending: 1, acked: 0, failed: 0 },
      children: [{ topic: 'page', id: 'g1', outcome: 'pending' }],
    });
    expect(await json('/api/message?topic=page&id=g1')).toMatchObject({
      state: 'ready',
      parent: { topic: 'chapter', id: 'c3' },
    });

    type View = { topic: string; id: string; state: string; more: number; children: View[] } & Record<string, unknown>;
    type Answer = { total: number; shown: number; states: Record<string, number>; root: View };
    const flow = (await json('/api/flow?topic=book&id=b1')) as unknown as Answer;
    expect(flow).toMatchObject({
      total: 5,
      shown: 5,
      states: { 'waiting-children': 2, completed: 1, dead: 1, ready: 1 },
      root: { topic: 'book', id: 'b1', state: 'waiting-children', more: 0 },
    });
    const byId = Object.fromEntries(flow.root.children.map((child) => [child.id, child]));
    expect(byId).toEqual({
      c1: {
        topic: 'chapter',
        id: 'c1',
        state: 'completed',
        preview: { text: '{"pages":3}', truncated: false, bytes: 11 },
        children: [],
        more: 0,
      },
      c2: {
        topic: 'chapter',
        id: 'c2',
        state: 'dead',
        failure: { reason: 'failed', error: expect.stringContaining('out of ink') as unknown },
        children: [],
        more: 0,
      },
      c3: {
        topic: 'chapter',
        id: 'c3',
        state: 'waiting-children',
        children: [{ topic: 'page', id: 'g1', state: 'ready', children: [], more: 0 }],
        more: 0,
      },
    });
    // From a child down, and cut to a budget: the rest counted, every state still counted.
    expect(await json('/api/flow?topic=chapter&id=c3')).toMatchObject({ total: 2, shown: 2, root: { id: 'c3' } });
    const cut = (await json('/api/flow?topic=book&id=b1&limit=2')) as unknown as Answer;
    expect(cut).toMatchObject({
      total: 5,
      shown: 2,
      states: { 'waiting-children': 2, completed: 1, dead: 1, ready: 1 },
    });
    expect([cut.root.children.length, cut.root.more]).toEqual([1, 2]);
    // The one child that fits (whichever Redis gives first) counts its own children, none drawn.
    const [first] = cut.root.children;
    expect([first.children.length, first.more]).toEqual([0, byId[first.id].children.length]);

    // The waiting parents by state, and their count in the topic's gauges.
    const waiting = (await json('/api/messages?topic=book&state=waiting-children')) as unknown as { id: string }[];
    expect(waiting.map((row) => row.id)).toEqual(['b1']);
    expect(await json('/api/topic?topic=book')).toMatchObject({ gauges: { waitingChildren: 1, delayed: 0 } });
    expect(await json('/api/topics?search=book')).toMatchObject({ rows: [{ topic: 'book', waitingChildren: 1 }] });

    const missing = await get('/api/flow?topic=book&id=none');
    expect({ status: missing.status, body: await missing.json() }).toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND' },
    });
    for (const [bad, code] of [
      ['', 'BAD_REQUEST'],
      ['topic=book', 'BAD_REQUEST'],
      ['topic=book&topic=page&id=b1', 'BAD_REQUEST'],
      ['topic=book&id=b1&limit=0', 'BAD_REQUEST'],
      ['topic=book&id=b1&limit=2001', 'BAD_REQUEST'],
      ['topic=book&id=b1&limit=x', 'BAD_REQUEST'],
      [`topic=${encodeURIComponent('bad topic')}&id=b1`, 'INVALID_TOPIC'],
      [`topic=book&id=${'x'.repeat(257)}`, 'INVALID_MESSAGE_ID'],
    ]) {
      const response = await get(`/api/flow?${bad}`);
      expect({ bad, status: response.status, code: ((await response.json()) as { code: string }).code }).toEqual({
        bad,
        status: 400,
        code,
      });
    }
    expect((await get('/api/flow?topic=book&id=b1', {})).status).toBe(403);
  });

  it("answers a topic's history over the range asked, and a typed 400 for a bad range", async () => {
    const { queue } = served;
    await queue.push('orders', { order: 1 });
    await eventually(async () => (await queue.history('orders')).points.some((point) => point.pushed === 1));
    const hour = (await json('/api/history?topic=orders')) as unknown as TopicHistory;
    expect(hour).toEqual(await queue.history('orders', { from: hour.from, to: hour.to - 1, stepMs: 60_000 }));
    expect(hour.points.reduce((total, point) => total + point.pushed, 0)).toBe(1);
    // The last 24 hours in 15-minute steps, ending with the step of now on the server's clock.
    const day = (await json('/api/history?topic=orders&lastMs=86400000&stepMs=900000')) as unknown as TopicHistory;
    expect(day).toMatchObject({ topic: 'orders', stepMs: 900_000, to: day.from + 86_400_000 });
    expect(day.points).toHaveLength(96);
    expect(day.points.at(-1)!.pushed).toBeGreaterThanOrEqual(hour.points.at(-1)!.pushed);
    const ranged = (await json(
      `/api/history?topic=orders&from=${hour.to - 600_000}&to=${hour.to - 1}`,
    )) as unknown as TopicHistory;
    expect(ranged.points.map((point) => point.at)).toEqual(hour.points.slice(-10).map((point) => point.at));
    // The last 10 minutes before a given end: the same steps.
    expect(await json(`/api/history?topic=orders&lastMs=600000&to=${hour.to - 1}`)).toEqual(ranged);
    for (const [bad, text] of [
      ['stepMs=90000', 'stepMs must be a whole number of minutes'],
      ['stepMs=0', 'stepMs must be a whole number of minutes'],
      ['lastMs=1h', 'lastMs must be a duration'],
      ['lastMs=90060000', 'lastMs must be a duration'],
      ['from=-5', 'from must be a time'],
      ['to=1e12', 'to must be a time'],
      ['from=2000000&to=1000000', 'from must not be after to'],
      ['from=1000&lastMs=3600000', 'give from or lastMs, not both'],
      ['from=0&to=86400000000', 'the range holds 1440000 steps, over 1500'],
    ]) {
      const response = await get(`/api/history?topic=orders&${bad}`);
      expect({ bad, status: response.status }).toEqual({ bad, status: 400 });
      expect(await response.json()).toEqual({ code: 'BAD_REQUEST', message: expect.stringContaining(text) as unknown });
    }
    expect((await get('/api/history')).status).toBe(400);
    expect((await get(`/api/history?topic=${encodeURIComponent('bad topic')}`)).status).toBe(400);
    expect((await get('/api/history?topic=orders', {})).status).toBe(403);
  });

  it('opens the topics named . and .. and a message with id .., by name in the query', async () => {
    const { queue } = served;
    await queue.push('.', { dot: 1 }, { id: '..' });
    await queue.push('..', { dots: 2 }, { id: '.' });
    const { cookie, token } = await session();
    for (const [topic, id] of [
      ['.', '..'],
      ['..', '.'],
    ]) {
      const name = encodeURIComponent(topic);
      expect(await json(`/api/topic?topic=${name}`)).toMatchObject({ topic, gauges: { ready: 1 } });
      const rows = (await json(`/api/messages?topic=${name}&state=ready`)) as unknown as { id: string }[];
      expect(rows.map((row) => row.id)).toEqual([id]);
      expect(await json(`/api/message?topic=${name}&id=${encodeURIComponent(id)}`)).toMatchObject({ id });
      const paused = await post(`/pause?topic=${name}`, {}, { cookie, 'x-ackq-csrf': token });
      expect(await paused.json()).toEqual({ paused: true });
      expect(await queue.stats(topic)).toMatchObject({ paused: true });
    }
    for (const bad of ['/api/topic', '/api/topic?topic=', '/api/topic?topic=a&topic=b', '/api/message?topic=a']) {
      const response = await get(bad);
      expect({ bad, status: response.status }).toEqual({ bad, status: 400 });
    }
  });

  it('answers topics, ids and steps named __proto__, constructor, toString and hasOwnProperty like any other', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype);
    await runNamedFlow(served.queue, {
      topic: 'book',
      childTopics: OBJECT_NAMES,
      kidsTopic: 'kids',
      childIds: OBJECT_NAMES,
      steps: OBJECT_NAMES,
      error: 'fails after its steps',
    });
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before);
    type Named = { topic: string; id: string };
    const detail = (await json('/api/message?topic=book&id=parent')) as unknown as {
      steps: { name: string; value: unknown }[];
      children: Named[];
    };
    expect(detail.steps).toEqual(OBJECT_NAMES.map((name) => ({ name, value: `step ${name}` })).sort(byName));
    const named = [...OBJECT_NAMES.map((topic) => `${topic} child`), ...OBJECT_NAMES.map((id) => `kids ${id}`)];
    expect(detail.children.map(({ topic, id }) => `${topic} ${id}`).sort()).toEqual(named.sort());
    const flow = (await json('/api/flow?topic=book&id=parent')) as unknown as { root: { children: Named[] } };
    expect(flow.root.children.map(({ topic, id }) => `${topic} ${id}`).sort()).toEqual(named.sort());
    for (const topic of OBJECT_NAMES) {
      const rows = (await json(`/api/topics?search=${topic}`)).rows;
      expect(rows.map((row) => row.topic)).toContain(topic);
    }
  });

  it('answers times past the range of a Date (an older writer) as the numbers stored', async () => {
    const { queue } = served;
    const stored = new StoredValues(fx.redis as Redis, prefix);
    await queue.push('far', 'later', { id: 'far', delayMs: 60_000 });
    await queue.upsertSchedule('far', 'rarely', { everyMs: 3_600_000, payload: 'tick' });
    await stored.rescore('far', 1e16);
    await stored.rescore('rarely', 1e16);
    await stored.rewriteSchedule('rarely', (definition) => (definition.e = 2 ** 53 - 1));
    const delayed = (await json('/api/messages?topic=far&state=delayed')) as unknown as unknown[];
    expect(delayed).toEqual([expect.objectContaining({ id: 'far', dueAt: 1e16 })]);
    expect(await json('/api/message?topic=far&id=far')).toMatchObject({ dueAt: 1e16 });
    expect(await json('/api/topic?topic=far')).toMatchObject({
      gauges: { delayed: 1 },
      schedules: [expect.objectContaining({ name: 'rarely', everyMs: 2 ** 53 - 1, nextRunAt: 1e16 })],
    });
  });

  it('refuses an action without the page token, or from another site, and changes nothing', async () => {
    const { queue } = served;
    await queue.push('t', 1, { id: 'a', maxAttempts: 1 });
    await queue.nack((await queue.reserve('t'))[0], { error: new Error('no') });
    const { cookie, token } = await session();
    const attempts: Record<string, string>[] = [
      {},
      { cookie },
      { 'x-ackq-csrf': token },
      { cookie, 'x-ackq-csrf': 'A'.repeat(32) },
      { cookie, 'x-ackq-csrf': token, origin: 'https://evil.example' },
      { cookie, 'x-ackq-csrf': token, 'sec-fetch-site': 'cross-site' },
    ];
    await queue.upsertSchedule('t', 'kept', { everyMs: 3_600_000 });
    for (const headers of attempts) {
      for (const [path, body] of [
        ['/dead/requeue?topic=t', { all: true }],
        ['/unschedule?topic=t&schedule=kept', {}],
      ] as const) {
        const response = await post(path, body, headers);
        expect(response.status).toBe(403);
        expect(await response.json()).toMatchObject({ code: 'CSRF' });
      }
    }
    expect(await queue.stats('t')).toMatchObject({ dead: 1, ready: 0 });
    expect(await queue.schedules('t')).toHaveLength(1);
    const sameSite = {
      cookie,
      'x-ackq-csrf': token,
      origin: new URL(served.url).origin,
      'sec-fetch-site': 'same-origin',
    };
    expect(await (await post('/dead/requeue?topic=t', { ids: ['a'] }, sameSite)).json()).toEqual({ requeued: 1 });
    expect(await queue.stats('t')).toMatchObject({ dead: 0, ready: 1 });
  });

  it('refuses an action whose Origin is null, does not parse or is another site, with the right token', async () => {
    const { queue } = served;
    const { cookie, token } = await session();
    const own = new URL(served.url);
    const refused = [
      'null',
      'not a url',
      'http://',
      '',
      'file:///etc',
      `${own.origin}/queues`,
      `https://${own.host}.evil.example`,
      'https://evil.example',
    ];
    for (const origin of refused) {
      const response = await post('/pause?topic=t', {}, { cookie, 'x-ackq-csrf': token, origin });
      expect({ origin, status: response.status }).toEqual({ origin, status: 403 });
      expect(await response.json()).toMatchObject({ code: 'CSRF' });
    }
    expect(await queue.stats('t')).toMatchObject({ paused: false });
    const ok = await post('/pause?topic=t', {}, { cookie, 'x-ackq-csrf': token, origin: own.origin });
    expect(ok.status).toBe(200);
    expect(await queue.stats('t')).toMatchObject({ paused: true });
  });

  it('requeues, purges, cancels, pauses, resumes and runs a schedule now', async () => {
    const { queue } = served;
    const topic = 'jobs';
    for (const id of ['d1', 'd2', 'd3']) {
      await queue.push(topic, id, { id, maxAttempts: 1 });
      await queue.nack((await queue.reserve(topic))[0], { error: new Error('boom') });
    }
    await queue.push(topic, 'later', { id: 'later', delayMs: 60_000 });
    await queue.upsertSchedule(topic, 'hourly', { everyMs: 3_600_000, payload: 'tick' });
    const { cookie, token } = await session();
    const act = async (path: string, body: unknown = {}) => {
      const [route, query = ''] = path.split('?');
      const response = await post(`${route}?topic=${topic}${query && `&${query}`}`, body, {
        cookie,
        'x-ackq-csrf': token,
      });
      return { status: response.status, body: await response.json() };
    };
    expect(await act('/dead/purge', { ids: ['d1'] })).toEqual({ status: 200, body: { purged: 1 } });
    expect(await act('/dead/requeue', { all: true })).toEqual({ status: 200, body: { requeued: 2 } });
    expect((await act('/dead/requeue', { ids: [] })).status).toBe(400);
    expect((await act('/dead/requeue', { ids: ['x'], all: true })).status).toBe(400);
    expect(await act('/cancel?id=later')).toEqual({ status: 200, body: { cancelled: 'delayed' } });
    expect((await act('/cancel?id=later')).status).toBe(404);
    expect(await act('/pause')).toEqual({ status: 200, body: { paused: true } });
    expect(await queue.stats(topic)).toMatchObject({ paused: true, ready: 2, delayed: 0, dead: 0 });
    expect(await act('/resume')).toEqual({ status: 200, body: { paused: false } });
    const run = await act('/run?schedule=hourly');
    expect(run).toEqual({
      status: 200,
      body: { id: expect.stringMatching(/^schedule:hourly@/) as unknown, duplicate: false },
    });
    expect((await act('/run?schedule=missing')).status).toBe(404);
    expect(await queue.stats(topic)).toMatchObject({ paused: false, ready: 3 });
    expect(await act('/unschedule?schedule=hourly')).toEqual({ status: 200, body: { removed: true } });
    expect(await queue.schedules(topic)).toEqual([]);
    expect((await act('/unschedule?schedule=hourly')).status).toBe(404);
  });

  it('requeues a flow parent dead as child-failed with its failed child; one whose child is gone answers 409', async () => {
    const { queue } = served;
    const [parent, child] = ['assembly.requeue', 'parts.requeue'];
    for (const id of ['p1', 'p2']) {
      await queue.pushFlow({
        topic: parent,
        id,
        payload: id,
        children: [{ topic: child, id: `${id}-part`, payload: 1, options: { maxAttempts: 1 } }],
      });
    }
    await queue.nack((await queue.reserve(child))[0], { error: new Error('broken') });
    await queue.cancel(child, 'p2-part');
    expect((await queue.stats(parent)).dead).toBe(2);
    const { cookie, token } = await session();
    const requeue = async (body: unknown) => {
      const response = await post(`/dead/requeue?topic=${parent}`, body, { cookie, 'x-ackq-csrf': token });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await requeue({ ids: ['p2'] })).toMatchObject({ status: 409, body: { code: 'FLOW_CHILD_GONE' } });
    expect(await requeue({ all: true })).toEqual({ status: 200, body: { requeued: 1 } });
    expect(await queue.get(parent, 'p1')).toMatchObject({ state: 'waiting-children' });
    expect(await queue.get(child, 'p1-part')).toMatchObject({ state: 'ready' });
    expect(await queue.get(parent, 'p2')).toMatchObject({ state: 'dead', reason: 'child-failed' });
  });

  it('still answers the older path routes (api/topics/:topic/...) for other names, as the query routes do', async () => {
    const { queue } = served;
    const topic = 'orders.eu';
    await queue.push(topic, { order: 1 }, { id: 'o1', maxAttempts: 1 });
    await queue.nack((await queue.reserve(topic))[0], { error: new Error('declined') });
    await queue.push(topic, { order: 2 }, { id: 'o2', delayMs: 60_000 });
    await queue.upsertSchedule(topic, 'hourly', { everyMs: 3_600_000, payload: 'tick' });
    const reads: [path: string, query: string][] = [
      [`/api/topics/${topic}`, `/api/topic?topic=${topic}`],
      [`/api/topics/${topic}/messages?state=dead`, `/api/messages?topic=${topic}&state=dead`],
      [`/api/topics/${topic}/messages?state=delayed&limit=1`, `/api/messages?topic=${topic}&state=delayed&limit=1`],
      [`/api/topics/${topic}/messages/o1`, `/api/message?topic=${topic}&id=o1`],
      [`/api/topics/${topic}/messages/none`, `/api/message?topic=${topic}&id=none`],
      [`/api/topics/${topic}/messages?state=lost`, `/api/messages?topic=${topic}&state=lost`],
      [`/api/topics/${encodeURIComponent('bad topic')}`, `/api/topic?topic=${encodeURIComponent('bad topic')}`],
    ];
    for (const [path, query] of reads) {
      const [byPath, byQuery] = await Promise.all([get(path), get(query)]);
      const answered = async (response: Response) => ({ status: response.status, body: await response.json() });
      expect({ path, ...(await answered(byPath)) }).toEqual({ path, ...(await answered(byQuery)) });
    }
    expect(await json(`/api/topics/${topic}/messages/o1`)).toMatchObject({ id: 'o1', payload: { order: 1 } });

    expect((await post(`/topics/${topic}/pause`, {}, { authorization: 'Bearer wrong' })).status).toBe(403);
    const noToken = await post(`/topics/${topic}/dead/requeue`, { all: true }, {});
    expect({ status: noToken.status, body: await noToken.json() }).toMatchObject({
      status: 403,
      body: { code: 'CSRF' },
    });
    const { cookie, token } = await session();
    const act = async (path: string, body: unknown = {}) => {
      const response = await post(`/topics/${topic}${path}`, body, { cookie, 'x-ackq-csrf': token });
      return { status: response.status, body: await response.json() };
    };
    expect(await act('/pause')).toEqual({ status: 200, body: { paused: true } });
    expect(await queue.stats(topic)).toMatchObject({ paused: true, dead: 1, delayed: 1 });
    expect(await act('/resume')).toEqual({ status: 200, body: { paused: false } });
    expect(await act('/dead/requeue', { ids: ['o1'] })).toEqual({ status: 200, body: { requeued: 1 } });
    expect(await act('/dead/purge', { all: true })).toEqual({ status: 200, body: { purged: 0 } });
    expect((await act('/dead/sweep', { all: true })).status).toBe(404);
    expect(await act('/messages/o2/cancel')).toEqual({ status: 200, body: { cancelled: 'delayed' } });
    expect((await act('/messages/o2/cancel')).status).toBe(404);
    expect((await act('/schedules/hourly/run')).body).toMatchObject({ duplicate: false });
    expect((await act('/schedules/missing/run')).status).toBe(404);
    expect(await queue.stats(topic)).toMatchObject({ paused: false, ready: 2, delayed: 0, dead: 0 });
  });

  it('refuses every action when read-only', async () => {
    await served.close();
    served = await startDashboardApp(platform, fx.connection, prefix, { readOnly: true });
    const { cookie, token } = await session();
    await served.queue.upsertSchedule('t', 'kept', { everyMs: 3_600_000 });
    for (const path of ['/pause?topic=t', '/topics/t/pause', '/unschedule?topic=t&schedule=kept']) {
      const response = await post(path, {}, { cookie, 'x-ackq-csrf': token });
      expect({ path, status: response.status }).toEqual({ path, status: 403 });
      expect(await response.json()).toMatchObject({ code: 'READ_ONLY' });
    }
    expect(await served.queue.stats('t')).toMatchObject({ paused: false });
    expect(await served.queue.schedules('t')).toHaveLength(1);
  });
});

describe('RedisAckQueueDashboardModule.register', () => {
  const fx = useRedis();

  it("shows a named queue's topics, and fails startup for a queue no module registers", async () => {
    const prefix = uniqueTopic('p');
    const moduleOf = (queue: string) => {
      @Module({
        imports: [
          RedisAckQueueModule.forRoot({ name: 'ops', connection: fx.connection, prefix, logLevel: 'silent' }),
          RedisAckQueueDashboardModule.register({ open: true, queue }),
        ],
      })
      class OpsModule {}
      return OpsModule;
    };
    const app = await NestFactory.create(moduleOf('ops'), { logger: false });
    try {
      await app.listen(0, '127.0.0.1');
      await app.get<RedisAckQueueService>(getQueueToken('ops')).push('ops.topic', 1);
      const response = await fetch(`${await app.getUrl()}/queues/api/topics`);
      expect(((await response.json()) as { rows: { topic: string }[] }).rows).toEqual([
        expect.objectContaining({ topic: 'ops.topic', ready: 1 }),
      ]);
    } finally {
      await app.close();
    }
    const unknown = await NestFactory.create(moduleOf('missing'), { logger: false });
    await expect(unknown.init()).rejects.toBeInstanceOf(InvalidOptionError);
    await unknown.close();
  });

  it('refuses to serve without a guard unless open: true, and bad options', () => {
    expect(() => RedisAckQueueDashboardModule.register({})).toThrow(InvalidOptionError);
    expect(() => RedisAckQueueDashboardModule.register({ guard: [] })).toThrow(/open: true/);
    expect(() => RedisAckQueueDashboardModule.register({ open: true })).not.toThrow();
    expect(() => RedisAckQueueDashboardModule.register({ open: true, path: '../x' })).toThrow(InvalidOptionError);
    expect(() => RedisAckQueueDashboardModule.register({ open: true, refreshMs: 10 })).toThrow(InvalidOptionError);
  });
});
