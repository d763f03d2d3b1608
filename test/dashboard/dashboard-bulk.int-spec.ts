import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp, type Platform } from './dashboard-app';

/** A text no answer may hold: it is in every tag and searched error text the bad requests send. */
const SECRET = 'tenant-secret-7f3a';

/**
 * Bulk actions from the dashboard, on both adapters: what one selects counted first (the count
 * its confirmation shows) and changing nothing, then started and followed to its end, aborted;
 * refused across sites, on a read-only dashboard, and for bad input (typed 400s that never quote
 * a tag or a searched text).
 */
describe.each<Platform>(['express', 'fastify'])('dashboard bulk actions (%s)', (platform) => {
  const fx = useRedis();
  let served: DashboardApp;
  let prefix: string;
  beforeEach(async () => {
    prefix = uniqueTopic('p');
    served = await startDashboardApp(platform, fx.connection, prefix);
  });
  afterEach(() => served.close());

  const auth = { authorization: OPERATOR };
  const get = async (path: string) => {
    const response = await fetch(`${served.url}/api${path}`, { headers: auth });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, text: '' };
  };

  /** The page's cookie and token, as a browser holding the page has them. */
  async function session(): Promise<Record<string, string>> {
    const page = await fetch(served.url, { headers: auth });
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    const token = /data-csrf="([^"]+)"/.exec(await page.text())![1];
    return { cookie, 'x-ackq-csrf': token };
  }

  async function post(path: string, body: unknown, headers: Record<string, string>) {
    const response = await fetch(`${served.url}/api${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown>, text };
  }

  /** Dead letters of `topic` that failed with `error`. */
  async function deadLetters(topic: string, ids: string[], error: string): Promise<void> {
    const { queue } = served;
    await queue.pushMany(
      topic,
      ids.map((id) => ({ id, payload: { id }, maxAttempts: 1 })),
    );
    for (const message of await queue.reserve(topic, { count: ids.length, leaseMs: 60_000 })) {
      await queue.nack(message, { error: new Error(error) });
    }
  }

  /** The ids of the bulk actions the prefix has a record of (the index bulkStatus reads). */
  const bulkIndex = () => fx.redis.hkeys(`{${prefix}:}:bulks`);

  it('counts what a bulk action selects and changes nothing, then starts it and follows it to done', async () => {
    const topic = 'orders';
    await deadLetters(topic, ['d1', 'd2', 'd3'], 'card declined');
    await deadLetters(topic, ['d4', 'd5'], 'address unknown');
    const query = `topic=${topic}&action=requeue&state=dead&errorContains=declined`;
    expect(await get(`/bulk/count?${query}`)).toMatchObject({ status: 200, body: { selected: 3 } });
    // The count of every dead letter (no filter: state defaults to dead), still nothing changed.
    expect(await get(`/bulk/count?topic=${topic}&action=requeue`)).toMatchObject({ body: { selected: 5 } });
    expect(await served.queue.stats(topic)).toMatchObject({ dead: 5, ready: 0 });
    expect(await bulkIndex()).toEqual([]);

    const started = await post(
      `/bulk?topic=${topic}`,
      { action: 'requeue', state: 'dead', errorContains: 'declined', maxPerSecond: 1000 },
      await session(),
    );
    expect(started).toMatchObject({ status: 200, body: { id: expect.any(String) as unknown, selected: 3 } });
    const id = started.body.id as string;
    const done = await eventually(async () => {
      const status = await get(`/bulk/status?id=${encodeURIComponent(id)}`);
      return status.body.state === 'done' && status;
    });
    expect(done).toMatchObject({
      status: 200,
      body: { id, topic, action: 'requeue', state: 'done', selected: 3, processed: 3, skipped: 0 },
    });
    expect(await served.queue.stats(topic)).toMatchObject({ dead: 2, ready: 3 });
    const left = await served.queue.list(topic, 'dead');
    expect(left.map((m) => m.id).sort()).toEqual(['d4', 'd5']);
    // Done: nothing left to abort.
    expect(await post(`/bulk/abort?id=${encodeURIComponent(id)}`, {}, await session())).toMatchObject({
      status: 200,
      body: { aborted: false },
    });
  });

  it('aborts a running bulk action: it acts on no more messages', async () => {
    const topic = 'slow';
    const ids = Array.from({ length: 200 }, (_, i) => `s${i}`);
    await deadLetters(topic, ids, 'boom');
    const headers = await session();
    const started = await post(`/bulk?topic=${topic}`, { action: 'purge', maxPerSecond: 1 }, headers);
    expect(started).toMatchObject({ status: 200, body: { selected: 200 } });
    const id = encodeURIComponent(started.body.id as string);
    expect(await post(`/bulk/abort?id=${id}`, {}, headers)).toMatchObject({ status: 200, body: { aborted: true } });
    const status = await get(`/bulk/status?id=${id}`);
    expect(status.body).toMatchObject({ state: 'aborted', selected: 200 });
    const { dead } = await served.queue.stats(topic);
    // At one per second, nearly all are left (200 would take minutes): none purged once the abort resolved.
    expect(dead).toBe(200 - (status.body.processed as number));
    expect(dead).toBeGreaterThan(0);
  });

  it('answers 404 for a bulk action it does not know, and aborted: false for it', async () => {
    expect(await get('/bulk/status?id=no-such-bulk')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    expect(await post('/bulk/abort?id=no-such-bulk', {}, await session())).toMatchObject({
      status: 200,
      body: { aborted: false },
    });
  });

  it('refuses a bulk action or an abort without the page token, or from another site, and starts nothing', async () => {
    const topic = 'guarded';
    await deadLetters(topic, ['g1', 'g2'], 'boom');
    const headers = await session();
    const started = await served.queue.bulk(topic, { action: 'requeue', maxPerSecond: 1 });
    const attempts: Record<string, string>[] = [
      {},
      { cookie: headers.cookie },
      { 'x-ackq-csrf': headers['x-ackq-csrf'] },
      { ...headers, 'x-ackq-csrf': 'A'.repeat(32) },
      { ...headers, origin: 'https://evil.example' },
      { ...headers, 'sec-fetch-site': 'cross-site' },
    ];
    for (const attempt of attempts) {
      for (const [path, body] of [
        [`/bulk?topic=${topic}`, { action: 'purge' }],
        [`/bulk/abort?id=${encodeURIComponent(started.id)}`, {}],
      ] as const) {
        const refused = await post(path, body, attempt);
        expect({ path, status: refused.status, code: refused.body.code }).toEqual({ path, status: 403, code: 'CSRF' });
      }
    }
    // Only the bulk action started here: none purged, the one started still running.
    expect(await bulkIndex()).toEqual([started.id]);
    expect(await served.queue.bulkStatus(started.id)).toMatchObject({ state: 'running' });
    await served.queue.abortBulk(started.id);
  });

  it('counts and shows status when read-only, and refuses to start or abort', async () => {
    await served.close();
    served = await startDashboardApp(platform, fx.connection, prefix, { readOnly: true });
    const topic = 'watched';
    await deadLetters(topic, ['w1'], 'boom');
    const started = await served.queue.bulk(topic, { action: 'requeue', maxPerSecond: 1 });
    const headers = await session();
    expect(await get(`/bulk/count?topic=${topic}&action=purge`)).toMatchObject({ status: 200 });
    expect(await get(`/bulk/status?id=${encodeURIComponent(started.id)}`)).toMatchObject({ status: 200 });
    for (const [path, body] of [
      [`/bulk?topic=${topic}`, { action: 'purge' }],
      [`/bulk/abort?id=${encodeURIComponent(started.id)}`, {}],
    ] as const) {
      const refused = await post(path, body, headers);
      expect({ path, status: refused.status, code: refused.body.code }).toEqual({
        path,
        status: 403,
        code: 'READ_ONLY',
      });
    }
    expect(await bulkIndex()).toEqual([started.id]);
    await served.queue.abortBulk(started.id);
  });

  it('answers bad input with a typed 400 that names the field and never quotes a tag or a searched text', async () => {
    const topic = 'bad';
    await deadLetters(topic, ['b1'], 'boom');
    const headers = await session();
    const bad: [why: string, body: Record<string, unknown>][] = [
      ['no action', {}],
      ['unknown action', { action: 'delete' }],
      ['state the action cannot select', { action: 'requeue', state: 'completed' }],
      ['unknown state', { action: 'cancel', state: 'lost' }],
      ['a tag of 129 bytes', { action: 'purge', tag: `${SECRET}${'x'.repeat(129 - SECRET.length)}` }],
      ['a tag with a control character', { action: 'purge', tag: `${SECRET}\n` }],
      ['a tag that is not text', { action: 'purge', tag: [SECRET] }],
      ['from after to', { action: 'purge', tag: SECRET, from: 2_000, to: 1_000 }],
      ['a time that is not epoch ms', { action: 'purge', tag: SECRET, from: '2026-11-29' }],
      ['a searched text too long', { action: 'purge', errorContains: SECRET.repeat(100) }],
      ['a rate of 0', { action: 'purge', tag: SECRET, maxPerSecond: 0 }],
      ['a rate too high', { action: 'purge', maxPerSecond: 1_000_001 }],
      ['an unknown field', { action: 'purge', tag: SECRET, tags: [SECRET] }],
    ];
    for (const [why, body] of bad) {
      const refused = await post(`/bulk?topic=${topic}`, body, headers);
      expect({ why, status: refused.status, code: refused.body.code }).toEqual({
        why,
        status: 400,
        code: 'BAD_REQUEST',
      });
      expect({ why, quoted: refused.text.includes(SECRET) }).toEqual({ why, quoted: false });
    }
    // A tag of 1 MB: the app's body limit refuses the request before the dashboard reads it.
    const huge = await post(`/bulk?topic=${topic}`, { action: 'purge', tag: SECRET.repeat(60_000) }, headers);
    expect({ status: huge.status, quoted: huge.text.includes(SECRET) }).toEqual({ status: 413, quoted: false });
    // The same through the count's query, a tag given twice included.
    for (const query of [
      `action=purge&tag=${SECRET}%0A`,
      `action=purge&tag=${SECRET}&tag=${SECRET}`,
      `action=purge&tag=${SECRET}&from=x`,
      `action=requeue&state=ready&tag=${SECRET}`,
    ]) {
      const response = await fetch(`${served.url}/api/bulk/count?topic=${topic}&${query}`, { headers: auth });
      const text = await response.text();
      expect({ query, status: response.status, quoted: text.includes(SECRET) }).toEqual({
        query,
        status: 400,
        quoted: false,
      });
    }
    expect(await bulkIndex()).toEqual([]);
    expect(await served.queue.stats(topic)).toMatchObject({ dead: 1 });
  });
});
