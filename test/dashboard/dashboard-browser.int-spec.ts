import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { ScalingReport } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { CHROMIUM_ARGS, chromiumPath } from './chromium';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';
import { StoredValues } from './stored-values';

const executablePath = chromiumPath();
/** Where the screenshots go (the README's comes from here). */
const SHOTS = join(__dirname, '../../test-results/dashboard');

if (!executablePath) {
  console.warn('SKIPPED: dashboard browser tests: no Chromium (apt-get install chromium, or set CHROMIUM_PATH)');
}

/** The dashboard in a real browser: counts shown, a dead letter requeued from the page, phone layout. */
(executablePath ? describe : describe.skip)('dashboard in Chromium', () => {
  const fx = useRedis();
  let served: DashboardApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const prefix = uniqueTopic('p');

  beforeAll(async () => {
    served = await startDashboardApp('express', fx.connection, prefix, { refreshMs: 500 });
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });
  beforeEach(async () => {
    const context = await browser.newContext({
      extraHTTPHeaders: { authorization: OPERATOR },
      viewport: { width: 1280, height: 860 },
    });
    page = await context.newPage();
    // A script error or a content-policy violation fails the test.
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  });
  afterEach(async () => {
    await page.context().close();
    expect(problems.splice(0)).toEqual([]);
  });

  async function seed(): Promise<void> {
    const { queue } = served;
    // The dead letters first: reserve takes the head of the line.
    for (const id of ['order-7', 'order-8']) {
      await queue.push('orders.payment', { order: id }, { id, maxAttempts: 1 });
      const [message] = await queue.reserve('orders.payment', { count: 1 });
      await queue.nack(message, { error: new Error('card declined') });
    }
    for (let i = 1; i <= 3; i++) await queue.push('orders.payment', { order: i, amount: 10 * i }, { id: `order-${i}` });
    await queue.push('orders.payment', { order: 9 }, { id: 'order-9', delayMs: 3_600_000 });
    await queue.push('mail.send', { to: 'someone' });
    await queue.upsertSchedule('mail.send', 'digest', { cron: '0 7 * * *', payload: { digest: true } });
    await queue.push('reports.nightly', {});
    await queue.pause('reports.nightly');
  }

  const loaded = () => page.waitForSelector('body[data-loaded="true"]');
  // A goto that changes only the hash may return before the page swapped its view: a click right
  // after it could land on the view before (its tabs, for another topic). Wait for the topic's own.
  const topicShown = (topic: string) => page.locator('#topic-title', { hasText: topic }).waitFor();
  const cell = (topic: string, column: string) =>
    page.locator(`#topics-table tr[data-topic="${topic}"] td[data-count="${column}"]`);

  it('shows every topic with its counts, and requeues a dead letter from the page', async () => {
    await seed();
    await page.goto(served.url);
    await loaded();
    await page.locator('#topics-table').waitFor();
    expect(await cell('orders.payment', 'ready').textContent()).toBe('3');
    expect(await cell('orders.payment', 'delayed').textContent()).toBe('1');
    expect(await cell('orders.payment', 'dead').textContent()).toBe('2');
    expect(await page.locator('tr[data-topic="reports.nightly"] .badge').textContent()).toBe('Paused');
    // Rates come from the counters in Redis: pushes made now show as intake at a later refresh.
    await served.queue.pushMany(
      'mail.send',
      Array.from({ length: 20 }, (_, i) => ({ payload: i })),
    );
    const intake = page.locator('#topics-table tr[data-topic="mail.send"] td[data-rate="in"]');
    await eventually(async () => /^[1-9][\d.,]*\/s$/.test((await intake.textContent()) ?? ''));
    await page.screenshot({ path: join(SHOTS, 'topics.png'), fullPage: true });

    await page.getByRole('link', { name: 'orders.payment' }).click();
    await page.getByRole('tab', { name: 'Dead (2)' }).click();
    await page.locator('#messages-table tr[data-id="order-7"]').waitFor();
    await page.getByRole('checkbox', { name: 'Select order-7' }).check();
    await page.getByRole('button', { name: 'Requeue selected (1)' }).click();
    const confirm = page.locator('#confirm');
    await confirm.waitFor({ state: 'visible' });
    expect(await confirm.textContent()).toContain('Requeue 1 dead letter of orders.payment?');
    await page.locator('#confirm-ok').click();
    await page.getByRole('status').getByText('Requeued 1 dead letter.').waitFor();
    await eventually(async () => (await served.queue.stats('orders.payment')).dead === 1);
    expect(await served.queue.stats('orders.payment')).toMatchObject({ ready: 4, dead: 1 });
    await page.getByRole('tab', { name: 'Dead (1)' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'topic.png'), fullPage: true });
  });

  it('asks before a change and changes nothing when the operator keeps things as they are', async () => {
    await page.goto(`${served.url}#/topic/orders.payment`);
    await topicShown('orders.payment');
    await loaded();
    await page.getByRole('button', { name: 'Pause topic' }).click();
    await page.locator('#confirm').waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await page.locator('#confirm').waitFor({ state: 'hidden' });
    expect((await served.queue.stats('orders.payment')).paused).toBe(false);
  });

  it('counts a bulk requeue before its confirmation, starts it once confirmed and follows it to done', async () => {
    const { queue } = served;
    const topic = 'orders.bulk';
    for (const [id, error] of [
      ['b1', 'card declined'],
      ['b2', 'card declined'],
      ['b3', 'card declined'],
      ['b4', 'timeout'],
    ]) {
      await queue.push(topic, { id }, { id, maxAttempts: 1 });
      await queue.nack((await queue.reserve(topic))[0], { error: new Error(error) });
    }
    await page.goto(`${served.url}#/topic/${topic}`);
    await topicShown(topic);
    await loaded();
    const form = page.getByRole('form', { name: 'Bulk action' });
    await form.getByLabel('Action').selectOption('requeue');
    await form.getByLabel('Error contains').fill('declined');
    const confirm = page.locator('#confirm');
    // Kept as is: counted, nothing started.
    await form.getByRole('button', { name: 'Count and confirm…' }).click();
    await confirm.waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    expect(await served.queue.stats(topic)).toMatchObject({ dead: 4, ready: 0 });

    await form.getByRole('button', { name: 'Count and confirm…' }).click();
    await confirm.waitFor({ state: 'visible' });
    expect(await page.locator('#confirm-text').textContent()).toContain(
      `Requeue 3 dead messages of ${topic} (whose error contains "declined")?`,
    );
    expect(await page.locator('#confirm-ok').textContent()).toBe('Requeue 3');
    await page.screenshot({ path: join(SHOTS, 'bulk-confirm.png') });
    await page.locator('#confirm-ok').click();
    await page
      .getByRole('status')
      .getByText(/^Started bulk action .+: 3 messages selected\.$/)
      .waitFor();
    await eventually(async () => (await served.queue.stats(topic)).ready === 3);
    expect(await served.queue.stats(topic)).toMatchObject({ dead: 1, ready: 3 });
    const row = page.locator('#bulk-table tbody tr');
    await row.getByText('done').waitFor();
    expect(await row.locator('td').nth(2).textContent()).toContain('3 of 3');
    await page.locator('#bulks').screenshot({ path: join(SHOTS, 'bulk.png') });
  });

  it("opens a message's details, payload included, and runs a schedule now", async () => {
    await page.goto(`${served.url}#/topic/orders.payment`);
    await topicShown('orders.payment');
    await loaded();
    await page.getByRole('tab', { name: /^Ready/ }).click();
    await page.getByRole('button', { name: 'order-1' }).click();
    const detail = page.getByRole('dialog', { name: 'Message order-1' });
    await detail.waitFor();
    expect(await page.locator('#detail-payload').textContent()).toContain('"amount": 10');
    await page.keyboard.press('Escape');

    await page.goto(`${served.url}#/topic/mail.send`);

    await topicShown('mail.send');
    await loaded();
    await page.getByRole('button', { name: 'Run digest now' }).click();
    await page.locator('#confirm-ok').click();
    await page
      .getByRole('status')
      .getByText(/^Pushed schedule:digest@/)
      .waitFor();
    expect((await served.queue.stats('mail.send')).ready).toBe(22);
  });

  it('shows the key and mode of keyed messages as text, and a message waiting for its key', async () => {
    const { queue } = served;
    const topic = 'docs.index';
    // A key is the user's text: markup in it must show as text.
    const debounced = await queue.push(topic, 1, { debounce: { key: '<b>doc-1</b>', delayMs: 3_600_000 } });
    // The first of doc-9 runs (leased, never acked here); the second waits for it, with no due time.
    const supersede = { key: 'doc-9', running: 'keep' as const };
    await queue.push(topic, 'a', { supersede });
    await queue.reserve(topic, { leaseMs: 600_000 });
    const waiting = await queue.push(topic, 'b', { supersede });
    expect(await queue.get(topic, waiting.id)).toMatchObject({ state: 'delayed', mode: 'supersede' });

    await page.goto(`${served.url}#/topic/${topic}`);

    await topicShown(topic);
    await loaded();
    await page.getByRole('tab', { name: 'Delayed (2)' }).click();
    const row = (id: string) => page.locator(`#messages-table tr[data-id="${id}"]`);
    await row(waiting.id).waitFor();
    expect(await page.locator('#messages-table thead th').allTextContents()).toEqual([
      'Id',
      'Attempt',
      'Due',
      'Group',
      'Key',
    ]);
    expect(await row(debounced.id).locator('td').last().textContent()).toBe('<b>doc-1</b> (debounce)');
    expect(await page.locator('#messages-table b').count()).toBe(0);
    expect(await row(waiting.id).locator('td').allTextContents()).toEqual([
      '0/5',
      'waits for its key',
      '–',
      'doc-9 (supersede)',
    ]);
    await page.getByRole('tab', { name: 'Leased (1)' }).click();
    await page.locator('#tab-leased[aria-selected="true"]').waitFor();
    expect(await page.locator('#messages-table td').last().textContent()).toBe('doc-9 (supersede)');

    await page.getByRole('tab', { name: 'Delayed (2)' }).click();
    await page.getByRole('button', { name: waiting.id, exact: true }).click();
    await page.getByRole('dialog', { name: `Message ${waiting.id}` }).waitFor();
    const fields = page.locator('#detail-body dl.fields').first();
    const names = await fields.locator('dt').allTextContents();
    const values = await fields.locator('dd').allTextContents();
    expect(Object.fromEntries(names.map((name, i) => [name, values[i]]))).toMatchObject({
      State: 'delayed',
      Key: 'doc-9',
      Mode: 'supersede',
      Due: 'when the running message of its key ends',
    });
    await page.keyboard.press('Escape');

    // A page without keyed messages keeps its columns.
    await queue.push(topic, 'plain');
    await page.getByRole('tab', { name: 'Ready (1)' }).click();
    await page.locator('#tab-ready[aria-selected="true"]').waitFor();
    await page.locator('#messages-table tbody tr').waitFor();
    expect(await page.locator('#messages-table thead th').allTextContents()).toEqual([
      'Id',
      'Attempt',
      'Enqueued',
      'Group',
    ]);
  });

  it("filters a topic's messages by tag and shows each row's tags", async () => {
    const { queue } = served;
    const topic = 'tenant.notices';
    await queue.push(topic, 1, { id: 'm-42', tags: ['tenant:42', 'spring'] });
    await queue.push(topic, 2, { id: 'm-7', tags: ['tenant:7'] });
    await queue.push(topic, 3, { id: 'm-none' });
    await page.goto(`${served.url}#/topic/${topic}`);
    await topicShown(topic);
    await loaded();
    const row = (id: string) => page.locator(`#messages-table tr[data-id="${id}"]`);
    await row('m-none').waitFor();
    expect(await page.locator('#messages-table thead th').allTextContents()).toEqual([
      'Id',
      'Attempt',
      'Enqueued',
      'Group',
      'Tags',
    ]);
    expect(await row('m-42').locator('td').last().textContent()).toBe('tenant:42, spring');
    expect(await row('m-none').locator('td').last().textContent()).toBe('–');
    await page.locator('#tag-filter').fill('tenant:42');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await eventually(async () => (await page.locator('#messages-table tbody tr').count()) === 1);
    expect(await page.locator('#messages-table tbody tr').getAttribute('data-id')).toBe('m-42');
    await expect(page.locator('#messages').textContent()).resolves.toMatch(/1–1 of 1/);
    await page.locator('#tag-filter').fill('tenant:none');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByText('No ready message with this tag.').waitFor();
    await page.locator('#tag-clear').click();
    await row('m-7').waitFor();
    expect(await page.locator('#messages-table tbody tr').count()).toBe(3);
  });

  it("shows a message's durable steps in its details, each result as a short line of JSON", async () => {
    const { queue } = served;
    const consumer = queue.consume(
      'orders.steps',
      async (_payload, context) => {
        await context.step('charge', () => ({ chargeId: 'ch_1' }));
        await context.step('notify', () => undefined);
        await context.step('receipt', () => 'r'.repeat(300));
        throw new Error('dies after its steps');
      },
      { maxAttempts: 1 },
    );
    await queue.push('orders.steps', { order: 5 }, { id: 'stepped' });
    await eventually(async () => (await queue.get('orders.steps', 'stepped'))?.state === 'dead');
    await consumer.close();

    await page.goto(`${served.url}#/topic/orders.steps`);

    await topicShown('orders.steps');
    await loaded();
    await page.getByRole('tab', { name: 'Dead (1)' }).click();
    await page.getByRole('button', { name: 'stepped', exact: true }).click();
    await page.getByRole('dialog', { name: 'Message stepped' }).waitFor();
    const steps = page.locator('#detail-body dl.steps');
    expect(await page.locator('#detail-body').textContent()).toContain('Steps (3)');
    expect(await steps.locator('dt').allTextContents()).toEqual(['charge', 'notify', 'receipt']);
    expect(await steps.locator('dd').allTextContents()).toEqual([
      '{"chargeId":"ch_1"}',
      'undefined',
      `"${'r'.repeat(199)}… (302 characters)`,
    ]);
    await page.keyboard.press('Escape');
  });

  it('opens the topics . and .., shows times no Date can hold as text, and a malformed address as an error', async () => {
    const { queue } = served;
    await queue.push('.', { dot: true }, { id: 'dot' });
    await queue.push('..', 'later', { id: 'far', delayMs: 60_000 });
    await queue.upsertSchedule('..', 'rarely', { everyMs: 3_600_000, payload: 'tick' });
    // What push and upsertSchedule refuse, an older version or another writer may have stored.
    const stored = new StoredValues(fx.redis as Redis, prefix);
    await stored.rescore('far', 1e16);
    await stored.rescore('rarely', 1e16);
    await stored.rewriteSchedule('rarely', (definition) => (definition.e = 2 ** 53 - 1));

    await page.goto(served.url);
    await loaded();
    await page.getByRole('link', { name: '..', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: '..', exact: true }).waitFor();
    await page.getByRole('tab', { name: 'Delayed (1)' }).click();
    const row = page.locator('#messages-table tr[data-id="far"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('10,000,000,000,000,000 ms (not a date)');
    const schedule = page.locator('#schedules-table tr[data-schedule="rarely"]');
    expect(await schedule.textContent()).toContain('10,000,000,000,000,000 ms (not a date)');
    await page.getByRole('button', { name: 'far', exact: true }).click();
    await page.getByRole('dialog', { name: 'Message far' }).waitFor();
    expect(await page.locator('#detail-body').textContent()).toContain('(not a date)');
    await page.keyboard.press('Escape');

    await page.evaluate("location.hash = '#/topic/.'");
    await page.getByRole('heading', { level: 1, name: '.', exact: true }).waitFor();
    await page.locator('#messages-table tr[data-id="dot"]').waitFor();

    await page.evaluate("location.hash = '#/topic/%E0%A4%A'");
    await page.getByRole('heading', { level: 1, name: 'No such page' }).waitFor();
    expect(await page.locator('#main').textContent()).not.toContain('dot');
  });

  it("opens a parent's details with its children's outcomes and its flow tree, and follows a link to a child and back", async () => {
    const { queue } = served;
    await queue.pushFlow({
      topic: 'report.build',
      id: 'r1',
      payload: { report: 1 },
      children: [
        { topic: 'report.part', id: 'part-ok', payload: 1 },
        { topic: 'report.part', id: 'part-bad', payload: 2, options: { onChildFailure: 'continue' } },
        // Waits for its own child, on a topic nobody consumes: r1 keeps waiting.
        {
          topic: 'report.part',
          id: 'part-wait',
          payload: 3,
          children: [{ topic: 'report.page', id: 'page-1', payload: 1 }],
        },
      ],
    });
    const consumer = queue.consume(
      'report.part',
      (_: unknown, context: { id: string }) => {
        if (context.id === 'part-bad') throw new Error('out of ink');
        return { pages: 3 };
      },
      { maxAttempts: 1 },
    );
    await eventually(async () => {
      const children = (await queue.get('report.build', 'r1'))?.children ?? [];
      return children.filter((child) => child.outcome !== 'pending').length === 2;
    }, 30_000);
    await consumer.close();

    await page.goto(served.url);
    await loaded();
    await page.locator('#topics-table').waitFor();
    expect(await cell('report.build', 'waiting-children').textContent()).toBe('1');
    await page.goto(`${served.url}#/topic/report.build`);
    await topicShown('report.build');
    await loaded();
    await page.getByRole('tab', { name: 'Waiting children (1)' }).click();
    await page.getByRole('button', { name: 'r1', exact: true }).click();
    const parent = page.getByRole('dialog', { name: 'Message r1' });
    await parent.waitFor();
    expect(await page.locator('#detail-children-count').textContent()).toBe(
      '3 children: 1 failed, 1 pending, 1 acked.',
    );
    const child = (id: string) => page.locator(`#detail-children tr[data-child="${id}"]`);
    expect(await child('part-bad').textContent()).toMatch(/failed.*failed: Error: out of ink/);
    expect(await child('part-wait').textContent()).toContain('pending');
    expect(await child('part-ok').textContent()).toContain('acked{"pages":3}');
    // The tree, read apart: every node with its state, this one not a link.
    const node = (id: string) => page.locator(`#flow-tree li[data-node="${id}"] > .node`);
    await node('page-1').waitFor();
    expect(await page.locator('#detail-flow-count').textContent()).toBe(
      '5 nodes: 1 ready, 2 waiting children, 1 dead, 1 completed.',
    );
    expect(await node('r1').textContent()).toBe('r1report.buildwaiting children');
    expect(await node('r1').locator('[aria-current="true"]').textContent()).toBe('r1');
    expect(await node('part-ok').textContent()).toBe('part-okreport.partcompleted{"pages":3}');
    expect(await node('part-bad').textContent()).toMatch(/^part-badreport\.partdeadfailed: Error: out of ink/);
    expect(await node('part-wait').textContent()).toBe('part-waitreport.partwaiting children');
    expect(await node('page-1').textContent()).toBe('page-1report.pageready');
    // docs/dashboard-flow.png comes from here.
    await parent.screenshot({ path: join(SHOTS, 'flow.png') });

    // A child's link opens its details, on its own topic's page, with a link back to its parent.
    await page.locator('#detail-children').getByRole('link', { name: 'part-wait' }).click();
    await page.getByRole('dialog', { name: 'Message part-wait' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'report.part' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/topic/report.part/message/part-wait');
    expect(await page.locator('#detail-parent').textContent()).toBe('r1 on report.build');
    await page.locator('#flow-tree li[data-node="page-1"]').waitFor();
    expect(await page.locator('#detail-children-count').textContent()).toBe('1 child: 1 pending.');
    await page.locator('#detail-parent').getByRole('link', { name: 'r1' }).click();
    await page.getByRole('dialog', { name: 'Message r1' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'report.build' }).waitFor();
    // Back: the child again; closed: the address is the topic's, and the same link opens it again.
    await page.goBack();
    await page.getByRole('dialog', { name: 'Message part-wait' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    // The address follows in the dialog's close event, a task after the dialog is hidden. A
    // function, not a string: Playwright evals a string again at each poll, which the page's
    // content policy (no 'unsafe-eval') refuses once it is no longer true at the first look.
    await page.waitForFunction(
      () => (globalThis as unknown as { location: { hash: string } }).location.hash === '#/topic/report.part',
    );
    expect(new URL(page.url()).hash).toBe('#/topic/report.part');
    await page.evaluate("location.hash = '#/topic/report.part/message/part-wait'");
    await page.getByRole('dialog', { name: 'Message part-wait' }).waitFor();
  });

  it('shows a part of a flow of 1,000 children and counts the rest', async () => {
    const children = Array.from({ length: 1_000 }, (_, i) => ({ topic: 'bulk.part', id: `bp-${i}`, payload: i }));
    await served.queue.pushFlow({ topic: 'bulk.build', id: 'big', payload: 'all', children });
    await page.goto(`${served.url}#/topic/bulk.build/message/big`);
    await topicShown('bulk.build');
    await page.getByRole('dialog', { name: 'Message big' }).waitFor();
    expect(await page.locator('#detail-children-count').textContent()).toBe(
      '1,000 children: 1,000 pending. Showing 100 (failed first); 900 more not listed.',
    );
    expect(await page.locator('#detail-children tbody tr').count()).toBe(100);
    await page.locator('#flow-tree').waitFor();
    expect(await page.locator('#detail-flow-count').textContent()).toBe(
      '1,001 nodes: 1,000 ready, 1 waiting children. Showing 200, level by level.',
    );
    expect(await page.locator('#flow-tree li[data-node]').count()).toBe(200);
    expect(await page.locator('#flow-tree li.more').textContent()).toBe('… 801 more children');
  });

  it('shows a tab chosen while a refresh runs, and keeps the focus on it', async () => {
    await page.goto(`${served.url}#/topic/orders.payment`);
    await topicShown('orders.payment');
    await loaded();
    await page.getByRole('tab', { name: /^Ready/ }).focus();
    // Every answer now takes 600 ms, so the key below lands while an auto refresh (every 500 ms) runs:
    // a loaded machine's timing, made certain. The tab asked for must still be shown, and focused.
    await page.route('**/api/**', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 600));
      await route.continue();
    });
    await page.waitForRequest((request) => request.url().includes('/api/'));
    await page.keyboard.press('ArrowRight');
    await page.locator('#tab-delayed[aria-selected="true"]').waitFor();
    await page.locator('#messages-table tr[data-id="order-9"]').waitFor();
    await eventually(async () => (await page.evaluate('document.activeElement?.id')) === 'tab-delayed');
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  });

  /** A topic's Scaling cards as shown, read in one go (a refresh may redraw them): name → value. */
  const scalingCards = () =>
    page.evaluate<Record<string, string>>(
      "Object.fromEntries([...document.querySelectorAll('#scaling-cards .card')].map((card) => " +
        "[card.querySelector('dt').textContent, card.querySelector('dd').textContent]))",
    );

  it('shows the Scaling panel of a topic with a target, with what scaling() answers, and none without one', async () => {
    const topic = 'render.scaled';
    await served.queue.setScalingTarget(topic, {
      targetWaitMs: 2_000,
      minConsumers: 1,
      maxConsumers: 12,
      concurrency: 4,
      cooldownMs: 30_000,
    });
    // Traffic: 10 handled by a worker that then closes (its handler times flushed), then 25 nobody takes.
    const worker = await fx.service({ prefix, logLevel: 'silent' });
    worker.consume(topic, () => new Promise((resolve) => setTimeout(resolve, 20)));
    await served.queue.pushMany(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ payload: i })),
    );
    await eventually(async () => (await served.queue.gauges(topic)).ackedTotal === 10, 30_000);
    await worker.close();
    await served.queue.pushMany(
      topic,
      Array.from({ length: 25 }, (_, i) => ({ payload: i })),
    );

    // Every answer the page read, to find the one it shows (the signal moves at each read).
    const answers: ScalingReport[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.endsWith('/api/scaling')) {
        void response.json().then((body: { scaling: ScalingReport }) => answers.push(body.scaling));
      }
    });
    await page.goto(`${served.url}#/topic/${topic}`);
    await topicShown(topic);
    await loaded();
    const panel = page.locator('#scaling');
    await panel.getByRole('heading', { name: 'Scaling' }).waitFor();
    const shown = await scalingCards();
    const note = await page.locator('#scaling-target').textContent();
    const after = (await served.queue.scaling(topic))!;

    expect(Object.keys(shown)).toEqual([
      'Desired consumers',
      'Computed now',
      'Arrival',
      'Handling',
      'Backlog',
      'Target wait',
    ]);
    await eventually(() => answers.length > 0);
    expect(answers.map(asShown)).toContainEqual(shown);
    // What cannot move between the page's read and the one after: nobody pushes or takes, the target is set.
    expect(after).toMatchObject({ backlog: 25, targetWaitMs: 2_000, minConsumers: 1, maxConsumers: 12 });
    expect(shown).toMatchObject({ Backlog: '25', 'Target wait': '2 s' });
    expect(note).toBe('Target: 1 to 12 consumers of 4 slots each; down once the need has stayed lower for 30 s.');
    // Handled messages and pushes happened: the shown figures are measured ones, not empty.
    expect(after.handlingMs).toBeGreaterThan(0);
    expect(shown.Handling).toMatch(/^[\d.]+ (ms|s)$/);
    expect(shown.Arrival).toMatch(/^[\d.,]+\/s$/);
    const desired = Number(shown['Desired consumers']);
    expect(desired).toBeGreaterThanOrEqual(1);
    expect(desired).toBeLessThanOrEqual(12);

    // A topic without a target: its view read the signal (null) and shows no panel.
    await served.queue.push('render.untargeted', 1);
    const read = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/api/scaling'));
    await page.goto(`${served.url}#/topic/render.untargeted`);
    await topicShown('render.untargeted');
    expect(await (await read).json()).toEqual({ scaling: null });
    await page.getByRole('heading', { level: 1, name: 'render.untargeted' }).waitFor();
    await page.locator('#tab-ready[aria-selected="true"]').waitFor();
    expect(await page.locator('#scaling').isHidden()).toBe(true);
    expect(await page.locator('#scaling').textContent()).toBe('');
  });

  it('lists the top groups by handler time with their counts, a group name as text, and an empty state', async () => {
    const topic = 'tenants.render';
    // An HTML name: shown as text, no element made from it, its handler never run.
    const markup = '<img src=x onerror="document.body.dataset.pwned=1">';
    const sleepMs: Record<string, number> = { 'tenant-a': 150, 'tenant-b': 40, [markup]: 5 };
    await served.queue.setScalingTarget(topic, { targetWaitMs: 5_000, maxConsumers: 8 });
    const worker = await fx.service({ prefix, logLevel: 'silent', backoff: { type: 'fixed', delayMs: 10 } });
    worker.consume(
      topic,
      async (payload: { group: string; fail?: 'once' | 'always' }, context) => {
        await new Promise((resolve) => setTimeout(resolve, sleepMs[payload.group]));
        if (payload.fail === 'always' || (payload.fail === 'once' && context.attempt === 1)) {
          throw new Error('render failed');
        }
      },
      { maxAttempts: 2 },
    );
    const message = (group: string, fail?: 'once' | 'always') => ({
      group,
      payload: fail ? { group, fail } : { group },
    });
    // Pushed by the worker too: its close flushes the pushes' history with the rest.
    await worker.pushMany(topic, [
      message('tenant-a'),
      message('tenant-a'),
      message('tenant-a'),
      message('tenant-b'),
      message('tenant-b', 'once'),
      message(markup),
      message(markup, 'always'),
    ]);
    await eventually(async () => {
      const gauges = await served.queue.gauges(topic);
      return gauges.ackedTotal === 6 && gauges.dead === 1 && gauges.ready + gauges.delayed + gauges.leased === 0;
    }, 30_000);
    // Closing the worker flushes its counts: from here on they are final.
    await worker.close();
    const usage = await served.queue.groupUsage(topic);
    expect(usage.groupCount).toBe(3);
    const counts = Object.fromEntries(
      usage.groups.map(({ group, handled, failed, retried, dead }) => [group, { handled, failed, retried, dead }]),
    );
    expect(counts).toEqual({
      'tenant-a': { handled: 3, failed: 0, retried: 0, dead: 0 },
      'tenant-b': { handled: 2, failed: 1, retried: 1, dead: 0 },
      [markup]: { handled: 1, failed: 2, retried: 1, dead: 1 },
    });
    const handlerMs = usage.groups.map((row) => row.handlerMs);
    expect(handlerMs).toEqual([...handlerMs].sort((a, b) => b - a));

    await page.goto(`${served.url}#/topic/${topic}`);

    await topicShown(topic);
    await loaded();
    const table = page.locator('#group-usage-table');
    await table.waitFor();
    expect(await table.locator('thead th').allTextContents()).toEqual([
      'Group',
      'Handled',
      'Failed',
      'Retried',
      'Dead',
      'Handler time',
    ]);
    const rows = await page.evaluate<string[][]>(
      "[...document.querySelectorAll('#group-usage-table tbody tr')].map((tr) => [...tr.children].map((cell) => cell.textContent))",
    );
    expect(rows).toEqual(
      usage.groups.map((row) => [
        row.group,
        ...[row.handled, row.failed, row.retried, row.dead].map(String),
        millis(row.handlerMs),
      ]),
    );
    expect(await page.locator('#group-usage-status').textContent()).toBe(
      '3 of 3 groups that used the topic in the last hour, most handler time first.',
    );
    expect(await page.locator('#group-usage img').count()).toBe(0);
    expect(await page.locator('#main img').count()).toBe(0);
    expect(await page.evaluate('document.body.dataset.pwned')).toBeUndefined();
    // docs/dashboard-fleet.png comes from here: the topic view's top, both panels included.
    await page.locator('#scaling-cards').waitFor();
    const top = (await page.locator('#topic-title').boundingBox())!;
    const bottom = (await page.locator('#group-usage').boundingBox())!;
    await page.screenshot({
      path: join(SHOTS, 'fleet.png'),
      fullPage: true,
      clip: { x: 0, y: top.y - 12, width: 1280, height: bottom.y + bottom.height - top.y + 24 },
    });

    // A topic whose messages have no group: the table is not drawn, a line says why.
    await served.queue.push('tenants.plain', 1);
    await page.goto(`${served.url}#/topic/tenants.plain`);
    await topicShown('tenants.plain');
    await loaded();
    const status = page.locator('#group-usage-status');
    await status.getByText('No ordered group used this topic in the last hour.').waitFor();
    expect(await page.locator('#group-usage-table').isHidden()).toBe(true);
    expect(await page.locator('#group-usage').getByRole('heading').textContent()).toBe('Top groups');
  });

  it('is usable by keyboard and fits a phone screen', async () => {
    await page.goto(served.url);
    await loaded();
    // Search by typing, then Tab to the topic's link and open it with Enter.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('topic-search');
    await page.keyboard.type('mail');
    await eventually(async () => (await page.locator('#topics-table tbody tr').count()) === 1);
    expect(await page.locator('#topics-table tbody th').textContent()).toBe('mail.send');
    for (let i = 0; i < 5 && (await page.evaluate('document.activeElement?.textContent')) !== 'mail.send'; i++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'mail.send' }).waitFor();
    // The state tabs: arrow keys move the selection and the focus.
    await page.getByRole('tab', { name: /^Ready/ }).focus();
    await page.keyboard.press('ArrowRight');
    await page.locator('#tab-delayed[aria-selected="true"]').waitFor();
    await eventually(async () => (await page.evaluate('document.activeElement?.id')) === 'tab-delayed');
    await page.keyboard.press('End');
    await page.locator('#tab-completed[aria-selected="true"]').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${served.url}#/topic/orders.payment`);
    await topicShown('orders.payment');
    await loaded();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'phone.png'), fullPage: true });
  });
});

/** A duration as the dashboard's panels show it (history-panel.js's millis). */
function millis(ms: number): string {
  if (ms < 10) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Math.round(ms / 100) / 10} s`;
}

/** The Scaling cards as scaling-panel.js draws them from one answer. */
function asShown(report: ScalingReport): Record<string, string> {
  const count = (n: number) => n.toLocaleString('en-US');
  return {
    'Desired consumers': count(report.desiredConsumers),
    'Computed now': count(report.computedConsumers),
    Arrival: `${report.arrivalPerSecond < 10 ? Math.round(report.arrivalPerSecond * 10) / 10 : count(Math.round(report.arrivalPerSecond))}/s`,
    Handling: report.handlingMs > 0 ? millis(report.handlingMs) : '–',
    Backlog: count(report.backlog),
    'Target wait': millis(report.targetWaitMs),
  };
}
