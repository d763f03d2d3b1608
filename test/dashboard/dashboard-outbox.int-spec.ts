import { Client } from 'pg';
import { chromium, type Browser, type Page } from 'playwright-core';
import { outboxMigrationSql, type OutboxDeadRow, type OutboxStatus } from '../../lib';
import { freePort } from '../../lib/testing/redis-probe';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { describeWithPostgres, TestPostgres } from '../support/test-postgres';
import { CHROMIUM_ARGS, chromiumPath } from './chromium';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';

const executablePath = chromiumPath();
if (!executablePath) {
  console.warn('SKIPPED: dashboard outbox browser test: no Chromium (apt-get install chromium, or set CHROMIUM_PATH)');
}

type Panel = { outbox: (OutboxStatus & { deadRows: OutboxDeadRow[] }) | null };

/**
 * The overview's Outbox panel: /api/outbox reads outboxStatus() and the first 20 dead rows
 * (null without an outbox), /api/outbox/requeue and /purge go through the CSRF check of every
 * action, and the page shows the counts, the relays and the dead rows, a topic with markup as text.
 */
describeWithPostgres('dashboard outbox panel', () => {
  const fx = useRedis();
  let pg: TestPostgres;
  let client: Client;
  let served: DashboardApp;

  beforeAll(async () => {
    pg = await TestPostgres.start();
    client = new Client(pg.url);
    await client.connect();
    await client.query(outboxMigrationSql());
    served = await startDashboardApp(
      'express',
      fx.connection,
      uniqueTopic('p'),
      { refreshMs: 500 },
      { outbox: { connection: pg.url, relay: false } },
    );
  });
  afterAll(async () => {
    await served?.close();
    await client?.end();
    await pg?.stop();
  });
  beforeEach(async () => {
    await client.query('DELETE FROM redis_ack_queue_outbox');
    await client.query('DELETE FROM redis_ack_queue_outbox_relays');
  });

  const auth = { authorization: OPERATOR };
  const get = (path: string) => fetch(`${served.url}${path}`, { headers: auth });
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${served.url}/api${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  async function session(): Promise<{ cookie: string; token: string }> {
    const page = await get('');
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    const token = /data-csrf="([^"]+)"/.exec(await page.text())![1];
    return { cookie, token };
  }

  /** Writes `count` rows through a transaction, as the app does. */
  async function write(count: number): Promise<void> {
    await client.query('BEGIN');
    for (let i = 0; i < count; i++) await served.queue.pushInTransaction(client, uniqueTopic('orders'), { i });
    await client.query('COMMIT');
  }

  /** A dead row, as a relay leaves one it can never push; returns its row id. */
  async function dead(topic: string, messageId: string): Promise<string> {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO redis_ack_queue_outbox (topic, message_id, payload, dead_at, dead_reason)
       VALUES ($1, $2, '{}', now(), 'INVALID_TOPIC the topic is not valid') RETURNING id::text`,
      [topic, messageId],
    );
    return rows[0].id;
  }

  /** A relay's report, as a running relay writes it every 5 s. */
  async function relay(host: string, lastError: string | null): Promise<void> {
    await client.query(
      `INSERT INTO redis_ack_queue_outbox_relays (relay_id, host, pid, started_at, seen_at, redis_ok, last_error, relayed, lag_ms)
       VALUES ($1, $2, 4242, now(), now(), $3, $4, 17, 2500)`,
      [`relay-${host}`, host, lastError === null, lastError],
    );
  }

  const deadAt = async (rowId: string) =>
    (await client.query<{ dead_at: Date | null }>('SELECT dead_at FROM redis_ack_queue_outbox WHERE id = $1', [rowId]))
      .rows[0];

  it('answers the status and the first 20 dead rows, and null for a service without an outbox', async () => {
    await write(2);
    for (let i = 0; i < 25; i++) await dead('orders', `m-${i}`);
    await relay('worker-1', null);
    const response = await get('/api/outbox');
    expect(response.status).toBe(200);
    const { outbox } = (await response.json()) as Panel;
    expect(outbox).toMatchObject({ depth: 2, dead: 25, relays: [{ host: 'worker-1', pid: 4242, relayed: 17 }] });
    expect(outbox!.deadRows).toHaveLength(20);
    expect(outbox!.deadRows[0]).toMatchObject({ topic: 'orders', messageId: 'm-0' });

    const plain = await startDashboardApp('express', fx.connection, uniqueTopic('p'));
    try {
      const none = await fetch(`${plain.url}/api/outbox`, { headers: auth });
      expect(await none.json()).toEqual({ outbox: null });
    } finally {
      await plain.close();
    }
  });

  it('requeues and purges dead rows by id or all, only with the CSRF token, and refuses bad ids changing nothing', async () => {
    const [first, second, third] = [await dead('a', '1'), await dead('b', '2'), await dead('c', '3')];
    const { cookie, token } = await session();
    const headers = { cookie, 'x-ackq-csrf': token };
    expect((await post('/outbox/requeue', { ids: [first] }, { cookie })).status).toBe(403);
    expect((await deadAt(first)).dead_at).not.toBeNull();
    expect((await post('/outbox/requeue', { ids: ['not-a-row'] }, headers)).status).toBe(400);
    expect((await post('/outbox/requeue', {}, headers)).status).toBe(400);
    expect((await post('/outbox/explode', { all: true }, headers)).status).toBe(404);
    expect((await deadAt(first)).dead_at).not.toBeNull();

    const requeued = await post('/outbox/requeue', { ids: [first] }, headers);
    expect(await requeued.json()).toEqual({ requeued: 1 });
    expect((await deadAt(first)).dead_at).toBeNull();
    const purged = await post('/outbox/purge', { all: true }, headers);
    expect(await purged.json()).toEqual({ purged: 2 });
    expect(await deadAt(second)).toBeUndefined();
    expect(await deadAt(third)).toBeUndefined();
  });

  it('answers 503 without the password when the database is down, and refuses sweeps when read-only', async () => {
    const port = await freePort();
    const down = await startDashboardApp(
      'express',
      fx.connection,
      uniqueTopic('p'),
      { readOnly: true },
      { outbox: { connection: `postgres://ops:hunter22@127.0.0.1:${port}/x`, relay: false } },
    );
    try {
      const response = await fetch(`${down.url}/api/outbox`, { headers: auth });
      expect(response.status).toBe(503);
      const body = await response.text();
      expect(body).toContain('OUTBOX_DATABASE');
      expect(body).not.toContain('hunter22');
      const page = await fetch(down.url, { headers: auth });
      const cookie = page.headers.get('set-cookie')!.split(';')[0];
      const token = /data-csrf="([^"]+)"/.exec(await page.text())![1];
      const refused = await fetch(`${down.url}/api/outbox/purge`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', cookie, 'x-ackq-csrf': token },
        body: JSON.stringify({ all: true }),
      });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'READ_ONLY' });
    } finally {
      await down.close();
    }
  });

  (executablePath ? describe : describe.skip)('in Chromium', () => {
    let browser: Browser;
    let page: Page;
    const problems: string[] = [];
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    });
    afterAll(() => browser?.close());
    beforeEach(async () => {
      const context = await browser.newContext({
        extraHTTPHeaders: { authorization: OPERATOR },
        viewport: { width: 1280, height: 860 },
      });
      page = await context.newPage();
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    });
    afterEach(async () => {
      await page.context().close();
      expect(problems.splice(0)).toEqual([]);
    });

    const card = (key: string) => page.locator(`#outbox [data-outbox="${key}"]`);

    it('shows depth, dead rows and a relay, a topic with markup as text, and requeues and purges from the page', async () => {
      await write(3);
      const markup = '<img src=x onerror=alert(1)>';
      const marked = await dead(markup, 'order-7');
      const other = await dead('orders', 'order-8');
      await relay('worker-<b>1</b>', 'REDIS_UNAVAILABLE connection refused');
      await page.goto(served.url);
      await page.locator('#outbox-cards').waitFor();
      expect(await card('depth').textContent()).toBe('3');
      expect(await card('dead').textContent()).toBe('2');
      expect(await card('relays').textContent()).toBe('1');
      const relayRow = page.locator('#outbox-relays-table tbody tr');
      expect(await relayRow.count()).toBe(1);
      expect(await relayRow.locator('th').textContent()).toBe('worker-<b>1</b>');
      expect(await relayRow.textContent()).toContain('Unreachable');
      expect(await relayRow.textContent()).toContain('REDIS_UNAVAILABLE connection refused');
      expect(await relayRow.textContent()).toContain('2.5 s');
      const topicCell = page.locator(`#outbox-dead-table tr[data-row="${marked}"] td[data-field="topic"]`);
      expect(await topicCell.textContent()).toBe(markup);
      expect(await page.locator('#outbox img, #outbox b').count()).toBe(0);

      await page.getByRole('checkbox', { name: `Select row ${marked}` }).check();
      await page.getByRole('button', { name: 'Requeue selected rows (1)' }).click();
      await page.locator('#confirm').waitFor({ state: 'visible' });
      expect(await page.locator('#confirm').textContent()).toContain('Requeue 1 dead outbox row?');
      await page.locator('#confirm-ok').click();
      await page.getByRole('status').getByText('Requeued 1 dead outbox row.').waitFor();
      expect((await deadAt(marked)).dead_at).toBeNull();
      await eventually(async () => (await card('dead').textContent()) === '1' || undefined);
      expect(await card('depth').textContent()).toBe('4');

      await page.getByRole('button', { name: 'Purge all rows' }).click();
      await page.locator('#confirm').waitFor({ state: 'visible' });
      await page.locator('#confirm-ok').click();
      await page.getByRole('status').getByText('Purged 1 dead outbox row.').waitFor();
      expect(await deadAt(other)).toBeUndefined();
      await page.getByText('No dead row.').waitFor();
    });
  });
});
