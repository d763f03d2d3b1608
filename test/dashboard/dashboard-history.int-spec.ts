import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { QueueConsumer, TopicHistory, TopicHistoryPoint } from '../../lib';
import { HISTORY_SLOTS, MinuteRecord } from '../../lib/engine/codecs/history-format';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { CHROMIUM_ARGS, chromiumPath } from './chromium';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';

const executablePath = chromiumPath();
/** Where the screenshots go (docs/dashboard-history.png and docs/dashboard-overview-trends.png come from here). */
const SHOTS = join(__dirname, '../../test-results/dashboard');
/** How long the slowed handler takes: far above what a no-op handler takes, even on a loaded machine. */
const SLOW_MS = 300;

if (!executablePath) {
  console.warn(
    'SKIPPED: dashboard history browser tests: no Chromium (apt-get install chromium, or set CHROMIUM_PATH)',
  );
}

type Counts = Pick<TopicHistoryPoint, 'pushed' | 'acked' | 'retried' | 'dead'>;
const counts = (point: TopicHistoryPoint): Counts => ({
  pushed: point.pushed,
  acked: point.acked,
  retried: point.retried,
  dead: point.dead,
});
const total = (history: TopicHistory, key: keyof Counts) => history.points.reduce((sum, point) => sum + point[key], 0);

/**
 * The history charts in a real browser, on a load the test makes: the counts of a minute and a
 * dead-letter spike read through the keyboard readout, a handling percentile that moved when the
 * handler slowed down, hover, the topics' trends, and no script error or content-policy violation.
 * History is kept in minutes of the server's clock: the test never waits for a minute to pass; it
 * asks history() where its load landed (one minute, or two when it straddled a boundary) and
 * checks that the page shows the same.
 */
(executablePath ? describe : describe.skip)('dashboard history in Chromium', () => {
  const fx = useRedis();
  const topic = uniqueTopic('orders');
  let served: DashboardApp;
  let browser: Browser;
  let page: Page;
  let consumer: QueueConsumer;
  let handlerMs = 0;
  const problems: string[] = [];

  beforeAll(async () => {
    served = await startDashboardApp('express', fx.connection, uniqueTopic('p'), { refreshMs: 500 });
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    mkdirSync(SHOTS, { recursive: true });
    consumer = served.queue.consume(
      topic,
      async (payload: { fail?: boolean }) => {
        if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
        if (payload.fail) throw new Error('declined');
      },
      { concurrency: 10, maxAttempts: 1 },
    );
  });
  afterAll(async () => {
    await consumer?.close();
    await browser?.close();
    await served?.close();
  });
  beforeEach(async () => {
    const context = await browser.newContext({
      extraHTTPHeaders: { authorization: OPERATOR },
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    // A content-policy violation is also an event in the page: collected there, read after each test.
    await page.addInitScript(
      "window.violations = []; document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
    );
  });
  afterEach(async () => {
    problems.push(...(await page.evaluate<string[]>('window.violations')));
    await page.context().close();
    expect(problems.splice(0)).toEqual([]);
  });

  /** Pushes `count` messages and waits until history() holds them all as settled. */
  async function load(count: number, payload: { fail?: boolean }): Promise<TopicHistory> {
    const before = await served.queue.history(topic);
    const settled = (h: TopicHistory) => total(h, 'acked') + total(h, 'dead');
    await served.queue.pushMany(
      topic,
      Array.from({ length: count }, () => ({ payload })),
    );
    const loaded = await eventually(async () => {
      const history = await served.queue.history(topic);
      return settled(history) === settled(before) + count &&
        total(history, 'pushed') === total(before, 'pushed') + count
        ? history
        : undefined;
    }, 30_000);
    return loaded!;
  }

  const readout = (chart: string) => page.locator(`#${chart} .readout`);
  const value = async (chart: string, key: string) =>
    (await readout(chart).locator(`[data-value="${key}"]`).textContent()) ?? '';

  /** Moves a chart's cursor by keyboard to the step that starts at `at`; false when it is not shown (yet). */
  async function cursorTo(chart: string, at: number): Promise<boolean> {
    await page.locator(`#${chart} .chart-frame`).focus();
    await page.keyboard.press('End');
    for (let i = 0; i < 60; i++) {
      const shown = Number(await readout(chart).getAttribute('data-at'));
      if (shown === at) return true;
      if (shown < at) return false;
      await page.keyboard.press('ArrowLeft');
    }
    return false;
  }

  /** Waits until the chart's readout, reached by keyboard, shows the point's counts. */
  async function showsCounts(point: TopicHistoryPoint): Promise<void> {
    await eventually(async () => {
      if (!(await cursorTo('chart-throughput', point.at))) return false;
      const shown = {
        pushed: Number(await value('chart-throughput', 'pushed')),
        acked: Number(await value('chart-throughput', 'acked')),
        retried: Number(await value('chart-throughput', 'retried')),
        dead: Number(await value('chart-throughput', 'dead')),
      };
      return JSON.stringify(shown) === JSON.stringify(counts(point));
    }, 30_000);
  }

  it("shows a minute's counts and a dead-letter spike, read by keyboard and on hover", async () => {
    await load(20, {});
    const history = await load(7, { fail: true });
    expect([total(history, 'pushed'), total(history, 'acked'), total(history, 'dead')]).toEqual([27, 20, 7]);

    await page.goto(`${served.url}#/topic/${topic}`);
    await page.locator('#chart-throughput[data-steps]').waitFor();
    expect(await page.locator('#chart-throughput .legend').textContent()).toBe(
      'In (pushed)Out (acked)Failed (retried)Dead',
    );
    // Each minute that holds the load (one, or two across a minute boundary) shows what history() says.
    const busy = history.points.filter((point) => point.pushed + point.acked + point.dead > 0);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeLessThanOrEqual(2);
    for (const point of busy) await showsCounts(point);
    const spike = busy.find((point) => point.dead > 0)!;
    await showsCounts(spike);
    const frame = page.locator('#chart-throughput .chart-frame');
    expect(await frame.getAttribute('aria-valuetext')).toContain(`Dead ${spike.dead}`);
    expect(await page.evaluate('document.activeElement?.getAttribute("role")')).toBe('slider');
    // Home goes to the oldest step; the pointer over the left edge shows it too.
    await page.keyboard.press('Home');
    expect(await frame.getAttribute('aria-valuenow')).toBe('1');
    expect(Number(await readout('chart-throughput').getAttribute('data-at'))).toBeLessThan(busy[0].at);
    await page.keyboard.press('End');
    const box = (await frame.boundingBox())!;
    await page.mouse.move(box.x + 57, box.y + box.height / 2);
    await eventually(async () => (await frame.getAttribute('aria-valuenow')) === '1');
    await showsCounts(spike);
  });

  it('moves the handling percentiles when the handler slows down', async () => {
    await page.goto(`${served.url}#/topic/${topic}`);
    await page.locator('#chart-handling[data-steps]').waitFor();
    const before = await served.queue.history(topic);
    const fast = before.points.filter((point) => point.handling.count > 0).at(-1)!;
    expect(fast.handling.p50!).toBeLessThan(SLOW_MS * 0.9);

    handlerMs = SLOW_MS;
    const after = await load(10, {});
    handlerMs = 0;
    // The newest minute with handling times: the same minute as before, or the next one.
    const slow = after.points.filter((point) => point.handling.count > 0).at(-1)!;
    expect(slow.handling.p99!).toBeGreaterThanOrEqual(SLOW_MS * 0.9);
    await eventually(async () => {
      if (!(await cursorTo('chart-handling', slow.at))) return false;
      const p99 = await value('chart-handling', 'p99');
      const ms = p99.endsWith(' s') ? parseFloat(p99) * 1000 : parseFloat(p99);
      const timed = (await readout('chart-handling').textContent())?.includes(`${slow.handling.count} timed`);
      return ms >= SLOW_MS * 0.9 && timed;
    }, 30_000);
  });

  it("shows each topic's last hour as a trend in the topics table", async () => {
    await served.queue.push(uniqueTopic('quiet'), {});
    const history = await served.queue.history(topic);
    const words = `${total(history, 'pushed')} in, ${total(history, 'acked')} out, ${total(history, 'dead')} dead`;
    await page.goto(served.url);
    const trend = page.locator(`#topics-table td[data-trend="${topic}"] .trend-text`);
    await eventually(async () => (await trend.textContent()) === words, 30_000);
    expect(await page.locator(`#topics-table td[data-trend="${topic}"] svg path`).count()).toBe(2);
  });

  it('switches to the last 24 hours in 15-minute steps, the load in its newest steps', async () => {
    await page.goto(`${served.url}#/topic/${topic}`);
    await page.locator('#chart-throughput[data-steps="60"]').waitFor();
    await page.getByRole('button', { name: 'Last 24 hours' }).click();
    await page.locator('#chart-throughput[data-steps="96"]').waitFor();
    expect(await page.locator('#history-day').getAttribute('aria-pressed')).toBe('true');
    const recent = await served.queue.history(topic, { stepMs: 900_000 });
    const newest = recent.points.filter((point) => point.pushed > 0).at(-1)!;
    await showsCounts(newest);
  });

  it('draws minutes stored before, as history() reads them (and the docs show them)', async () => {
    // An hour of another topic, written as the recorders would have written it: each minute
    // before this one, with a dead-letter spike and a slow spell of the handler.
    const shown = uniqueTopic('payments');
    await served.queue.push(shown, {});
    const key = await eventually(async () => (await fx.redis.keys(`*${shown}*:history`))[0]);
    const now = (await served.queue.history(shown)).to / 60_000 - 1;
    for (let minute = now - 59; minute < now; minute++) await stored(key, seeded(minute, now - minute));
    const history = await served.queue.history(shown);
    const spike = history.points.find((point) => point.at === (now - 17) * 60_000)!;
    expect(spike).toMatchObject({ dead: 12 });
    const slow = history.points.find((point) => point.at === (now - 5) * 60_000)!;
    expect(slow.handling.p99!).toBeGreaterThan(100);

    await page.goto(`${served.url}#/topic/${shown}`);
    await page.locator('#chart-throughput[data-steps]').waitFor();
    await showsCounts(spike);
    await eventually(async () => {
      if (!(await cursorTo('chart-handling', slow.at))) return false;
      return (await value('chart-handling', 'p99')) === `${Math.round(slow.handling.p99!)} ms`;
    }, 30_000);
    await page.locator('#chart-throughput .chart-frame').focus();
    await page.screenshot({ path: join(SHOTS, 'history.png'), fullPage: true });

    await page.goto(served.url);
    await eventually(async () => (await page.locator('#topics-table .trend-text').count()) >= 3, 30_000);
    await page.locator('main').screenshot({ path: join(SHOTS, 'overview-trends.png') });
  });

  /** Adds a minute's record to the history hash, in its slot, as history-record.lua keeps it. */
  async function stored(key: string, record: MinuteRecord): Promise<void> {
    await fx.redis.hset(key, String(record.minute % HISTORY_SLOTS), record.toArgs().join('|'));
  }
});

/** A minute `ago` minutes back of a steady topic: a dead-letter spike 17 minutes ago, slow handling in the last 8. */
function seeded(minute: number, ago: number): MinuteRecord {
  const record = new MinuteRecord(minute);
  const wave = Math.round(40 + 15 * Math.sin(ago / 6));
  record.pushed = wave;
  record.acked = wave - (ago % 3);
  record.retried = ago % 7 === 0 ? 3 : 0;
  record.dead = ago === 17 ? 12 : 0;
  for (let i = 0; i < record.acked; i++) {
    record.wait.add(2 + ((i * 7) % 20) + (ago < 8 ? 40 : 0));
    record.handling.add((ago < 8 ? 60 : 4) + ((i * 13) % (ago < 8 ? 90 : 8)));
  }
  return record;
}
