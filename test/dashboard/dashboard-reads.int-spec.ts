import type { Redis } from 'ioredis';
import type { MessageInfo, MessageState, RedisAckQueueService } from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';

/** Bytes Redis has sent to all its clients so far. */
async function bytesSent(redis: Redis): Promise<number> {
  const stats = await redis.info('stats');
  return Number(/total_net_output_bytes:(\d+)/.exec(stats)![1]);
}

/**
 * What Redis sends for `work`: the counter's change less what reading it costs (one INFO
 * reply, measured just before), so the figure is the work's own, whatever the machine's speed.
 */
async function bytesFor(redis: Redis, work: () => Promise<unknown>): Promise<number> {
  const first = await bytesSent(redis);
  const infoCost = (await bytesSent(redis)) - first;
  const before = await bytesSent(redis);
  await work();
  return (await bytesSent(redis)) - before - infoCost;
}

const PREVIEW = 300;
/** A payload whose JSON text is about 1 MiB, under the default maxPayloadBytes. */
const big = (n: number) => ({ n, blob: 'x'.repeat(1024 * 1024 - 200) });

/** Every state of a topic, one message of `payload` each (ids by state), on `queue`. */
async function everyState(queue: RedisAckQueueService, topic: string, payload: (n: number) => unknown) {
  const options = { headers: { source: 'web' }, maxAttempts: 1 };
  await queue.push(topic, payload(1), { ...options, id: 'dead' });
  await queue.nack((await queue.reserve(topic))[0], { error: new Error('no') });
  await queue.push(topic, payload(2), { ...options, id: 'completed' });
  await queue.ack((await queue.reserve(topic))[0], payload(2));
  await queue.push(topic, payload(3), { ...options, id: 'leased' });
  await queue.reserve(topic, { leaseMs: 600_000 });
  await queue.push(topic, payload(4), { ...options, id: 'delayed', delayMs: 600_000, group: 'g1' });
  await queue.push(topic, payload(5), { ...options, id: 'ready' });
}

const STATES: MessageState[] = ['ready', 'delayed', 'leased', 'dead', 'completed'];

/** A page's cost is bounded by its rows, and a row by a preview; the details carry the whole payload. */
describe('what the dashboard reads', () => {
  const fx = useRedis();

  describe.each([1, 4])('list with a preview, %d partition(s)', (partitions) => {
    const topic = uniqueTopic('previews');
    let queue: RedisAckQueueService;
    beforeAll(async () => {
      queue = await fx.service({ keepCompleted: true, topics: { [topic]: { partitions } } });
      await everyState(queue, topic, big);
    });

    it.each(STATES)('%s rows carry a preview of their payload, cut in Redis, and their other fields', async (state) => {
      const [whole] = await queue.list(topic, state);
      const [row] = await queue.list(topic, state, { preview: PREVIEW });
      const text = JSON.stringify(state === 'completed' ? whole.result : whole.payload);
      expect(row.preview).toEqual({ text: text.slice(0, PREVIEW), truncated: true, bytes: Buffer.byteLength(text) });
      expect(row.payload).toBeUndefined();
      expect(row.result).toBeUndefined();
      const { payload, result, ...rest } = whole;
      expect(payload ?? result).toBeDefined();
      // A completed record keeps its message's body (payload and headers) whole: a preview row, which
      // reads no body, shows its result's preview and no headers.
      if (state === 'completed') rest.headers = {};
      expect(row).toEqual({ ...rest, payload: undefined, preview: row.preview });
      expect(row.headers).toEqual(state === 'completed' ? {} : { source: 'web' });
      if (state === 'delayed') expect(row.group).toBe('g1');
    });

    it('keeps rows whole without the option, and get gives the whole payload', async () => {
      const rows = await queue.list(topic, 'ready');
      expect(rows[0].payload).toEqual(big(5));
      expect(rows[0].preview).toBeUndefined();
      expect((await queue.get(topic, 'delayed'))?.payload).toEqual(big(4));
    });
  });

  it('cuts a preview between characters, and shows a small payload whole, whatever it holds', async () => {
    const topic = uniqueTopic('texts');
    const queue = await fx.service();
    // Payloads that hold what the stored members after the payload look like.
    const payloads: unknown[] = [
      'é'.repeat(400),
      '😀'.repeat(100),
      { h: { a: '1' }, g: 'x', m: 3, s: ',"h":{},"m":2}' },
      [1, { m: 5 }],
      ',"m":5',
      null,
    ];
    for (const [i, payload] of payloads.entries()) {
      await queue.push(topic, payload, {
        id: `m${i}`,
        headers: { ',"h":': '"m":1}', ',"g":': ',"m":' },
        maxAttempts: 7,
      });
    }
    const rows = await queue.list(topic, 'ready', { preview: 301 });
    for (const [i, row] of rows.entries()) {
      const text = JSON.stringify(payloads[i]);
      const bytes = Buffer.byteLength(text);
      expect(row.preview!.bytes).toBe(bytes);
      expect(row.preview!.truncated).toBe(bytes > 301);
      expect(Buffer.byteLength(row.preview!.text)).toBeLessThanOrEqual(301);
      expect(text.startsWith(row.preview!.text)).toBe(true);
      if (bytes <= 301) expect(row.preview!.text).toBe(text);
      expect(row).toMatchObject({ headers: { ',"h":': '"m":1}', ',"g":': ',"m":' }, maxAttempts: 7 });
    }
    // The quote and 150 characters of two bytes, or of four (two UTF-16 units each): 301 bytes.
    expect(rows.map((row) => row.preview!.text.length)).toEqual([151, 151, 54, 11, 10, 4]);
  });

  describe('a partitioned topic of 1 MiB messages', () => {
    const topic = uniqueTopic('wide');
    const total = 24;
    let queue: RedisAckQueueService;
    let served: DashboardApp;
    beforeAll(async () => {
      const prefix = uniqueTopic('p');
      const topics = { [topic]: { partitions: 4 } };
      queue = await fx.service({ prefix, topics });
      served = await startDashboardApp('express', fx.connection, prefix, {}, { topics });
      for (let i = 0; i < total; i++) await queue.push(topic, big(i), { id: `m${i}`, delayMs: 600_000 + i });
    });
    afterAll(() => served?.close());
    const redis = () => fx.redis as Redis;

    it('reads nothing but the sizes for a page past the end', async () => {
      const figures: string[] = [];
      for (const state of ['delayed', 'ready', 'dead'] as MessageState[]) {
        const sent = await bytesFor(redis(), () => queue.list(topic, state, { offset: 1e12, limit: 500 }));
        // Four replies of a few integers each: nothing of any message.
        expect({ state, sent: sent < 1_000 }).toEqual({ state, sent: true });
        figures.push(`${state} ${sent} B`);
      }
      console.log(`A page past the end of ${total} messages of 1 MiB in 4 partitions: ${figures.join(', ')}`);
      expect(await queue.list(topic, 'delayed', { offset: total, limit: 500 })).toEqual([]);
    });

    it('reads the sort keys of the rows it skips, and only the rows of the page', async () => {
      let page: MessageInfo[] = [];
      const sent = await bytesFor(redis(), async () => {
        page = await queue.list(topic, 'delayed', { offset: total - 3, limit: 500, preview: PREVIEW });
      });
      expect(page.map((m) => m.id)).toEqual([`m${total - 3}`, `m${total - 2}`, `m${total - 1}`]);
      // A key per message (well under 64 bytes each), three previewed rows (under 1 KiB each).
      expect(sent).toBeLessThan(total * 64 + 3 * 1_024);
      // Without a preview, the same page carries its three bodies, but none of the skipped ones.
      const whole = await bytesFor(redis(), () => queue.list(topic, 'delayed', { offset: total - 3, limit: 500 }));
      expect(whole).toBeGreaterThan(3 * 1024 * 1024);
      expect(whole).toBeLessThan(4 * 1024 * 1024);
      console.log(`The last 3 of ${total} messages of 1 MiB: ${sent} B with previews, ${whole} B whole`);
    });

    it('serves the dashboard a page of previews, and one message whole', async () => {
      const get = (path: string) => fetch(`${served.url}/api${path}`, { headers: { authorization: OPERATOR } });
      let rows: MessageInfo[] = [];
      const sent = await bytesFor(redis(), async () => {
        rows = (await (await get(`/messages?topic=${topic}&state=delayed&limit=50`)).json()) as MessageInfo[];
      });
      expect(rows).toHaveLength(total);
      expect(rows.every((row) => row.payload === undefined && row.preview?.truncated === true)).toBe(true);
      expect(sent).toBeLessThan(total * (64 + 1_024));
      console.log(`The dashboard's page of ${total} messages of 1 MiB: ${sent} B from Redis`);
      const one = (await (await get(`/message?topic=${topic}&id=m7`)).json()) as MessageInfo;
      expect(one.payload).toEqual(big(7));
    });
  });
});
